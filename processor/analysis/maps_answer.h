// The answer of `pageblame maps`, as data: each asked process's address
// space at one moment (its versions alive then, RegionsAt), each region
// with its kind and resident bytes; render/maps_report.h prints it as JSON
// and text, render/pprof_profiles.h as a profile.
//
//   MapsQuery q;  q.processes = session's;  q.at = t;  q.kind_of = kinds.Function();
//   MapsAnswer a = Maps(idx, q);
//   a.processes[0].regions[0].kind;
//
// Resident bytes are the snapshot's that speaks for (process, at)
// (ResidentView::SnapshotFor), unknown (nullopt) where it read none of a
// region or there is none. Cost: one RegionsAt and one kind per region.
#ifndef PAGEBLAME_ANALYSIS_MAPS_ANSWER_H_
#define PAGEBLAME_ANALYSIS_MAPS_ANSWER_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "processor/analysis/region_kind.h"
#include "processor/analysis/region_runs.h"
#include "processor/analysis/scope.h"
#include "processor/index/trace_index.h"
#include "processor/residency/residency_index.h"

namespace pageblame::analysis {

// Scope: the `processes` to answer for, at `at`; kind_of is required.
struct MapsQuery : Scope {
  // Also the text's rows (ProcessMaps::runs): runs the kernel would merge,
  // or with `split` one per version.
  bool runs = false;
  bool split = false;
};

struct ProcessMaps {
  uint32_t process = 0;
  const residency::ResidencySnapshot* snapshot = nullptr;  // for (process, at); null: none
  const heap::HeapSnapshot* heap_snapshot = nullptr;       // for (process, at); null: none
  std::vector<MapsRegion> regions;  // alive at `at`, of the wanted kinds, by start
  uint64_t created_bytes = 0;       // of `regions`, made by a traced call
  uint64_t before_trace_bytes = 0;  // of `regions`, from before the trace
  std::optional<uint64_t> rss;      // of `regions` (AddRss)
  std::vector<RegionRun> runs;      // with MapsQuery::runs
};

struct MapsAnswer {
  uint64_t at = index::kEndOfTrace;
  bool split = false;      // MapsQuery::split: the runs are one per version
  bool snapshots = false;  // the trace has residency snapshots (of any process)
  std::vector<ProcessMaps> processes;  // in the query's order
};

MapsAnswer Maps(const index::TraceIndex& idx, const MapsQuery& query);

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_MAPS_ANSWER_H_

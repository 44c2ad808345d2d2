// Everything the HTML report (render/report_data.h) shows of one process,
// computed: its bytes over time by stack, its resident bytes at each
// snapshot, its live bytes by stack at `at` and its address strip then.
// The page's attribution, when it has one, is Attribute()'s (the caller's).
//
//   ReportQuery q;  q.process = p;  q.at = t;  q.rss = rss;  q.heap = heap;  q.kind_of = kinds.Function();
//   ReportAnalysis a = AnalyzeReport(idx, q);
//   Json data = ReportData(trace, options, a);
#ifndef PAGEBLAME_ANALYSIS_REPORT_ANALYSIS_H_
#define PAGEBLAME_ANALYSIS_REPORT_ANALYSIS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "processor/analysis/address_strip.h"
#include "processor/analysis/heap_split.h"
#include "processor/analysis/live_stacks.h"
#include "processor/analysis/region_kind.h"
#include "processor/analysis/resident_timeline.h"
#include "processor/analysis/scope.h"
#include "processor/analysis/stack_timeline.h"
#include "processor/index/trace_index.h"
#include "processor/residency/residency_index.h"

namespace pageblame::analysis {

// Scope: `at` is the flame graph's and the strip's moment; kind_of is
// required; `heap` splits the strip's arena regions into in use and free.
struct ReportQuery : Scope {
  uint32_t process = 0;                            // the process entry shown
  size_t buckets = 400;                            // time axis resolution
  size_t series_stacks = 80;                       // stacks with a series of their own
  size_t max_strip_regions = 2000;                 // beyond: the strip merges alike neighbours
};

struct ReportAnalysis {
  uint32_t process = 0;
  uint64_t at = index::kEndOfTrace;
  StackTimeline timeline;                   // max(buckets, 1) buckets
  // At the snapshots (at most max(buckets, 2)); series by their stack's
  // place in timeline.stacks. nullopt: the process has no snapshot.
  std::optional<ResidentTimeline> resident;
  bool snapshots = false;                   // the trace has snapshots (of any process)
  const residency::ResidencySnapshot* strip_snapshot = nullptr;  // for (process, at); null: none
  // The heap snapshot the strip's in-use and free bytes are from
  // (HeapView::SnapshotFor(process, at)); null: none.
  const heap::HeapSnapshot* heap_snapshot = nullptr;
  std::vector<VersionId> alive;             // RegionsAt(process, at)
  std::vector<LiveStack> live;              // of `alive`
  std::vector<StripRun> strip;              // of `alive`
};

ReportAnalysis AnalyzeReport(const index::TraceIndex& idx, const ReportQuery& query);

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_REPORT_ANALYSIS_H_

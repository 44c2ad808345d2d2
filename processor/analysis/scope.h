// Scope: what an analysis is asked about, the block every analysis's
// options share (AttributeOptions, GrowthOptions, MapsQuery, QueryOptions,
// ReportQuery derive from it): which processes, at which moment, with which
// residency snapshots, what each region is and which kinds count.
//
//   AttributeOptions o;
//   o.Select(session, selection);          // pid, processes, at, rss
//   o.kind_of = KindClassifier(session.frames()).Function();
//
// Each analysis says which of these it reads (growth reads its own two
// moments, not `at`; a query has no kinds).
#ifndef PAGEBLAME_ANALYSIS_SCOPE_H_
#define PAGEBLAME_ANALYSIS_SCOPE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "processor/analysis/region_kind.h"
#include "processor/heap/heap_index.h"
#include "processor/index/trace_index.h"
#include "processor/residency/residency_index.h"
#include "processor/session/selection.h"
#include "processor/session/session.h"

namespace pageblame::analysis {

struct Scope {
  std::optional<uint32_t> pid;      // the pid asked about (--pid), if one was
  std::vector<uint32_t> processes;  // its process entries, or every one (session::ProcessesOf)
  uint64_t at = index::kEndOfTrace;  // the moment (ns; kEndOfTrace: the end)
  // Residency snapshots (null: none): resident bytes from the latest
  // snapshot at or before the moment asked (resident_view.h).
  const residency::ResidencyIndex* rss = nullptr;
  // Heap snapshots (null: none): malloc arena bytes split into in use and
  // free (heap_split.h), from the latest at or before the moment asked.
  const heap::HeapIndex* heap = nullptr;
  // What each version is (KindClassifier::Function); without it nothing
  // has a kind.
  KindFunction kind_of;
  // Only regions of these kinds count (needs kind_of); empty: all.
  std::vector<RegionKind> kinds;

  // The selection's pid, processes and moment; the session's snapshots
  // (residency and heap).
  void Select(const session::Session& session, const session::Selection& selection) {
    pid = selection.pid;
    processes = selection.processes;
    at = selection.at;
    rss = session.residency();
    heap = session.heap();
  }
};

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_SCOPE_H_

// The HTML report's time axis of one process (render/report_data.h): its
// mapped and committed bytes at `buckets + 1` boundaries, and the same per
// creating stack for the stacks that held the most.
//
//   StackTimeline t = ComputeStackTimeline(idx, process, 400, 80, kinds.Function());
//   t.mapped[k];            // == `maps --at t.boundaries[k]` summed (exact)
//   t.stacks[0].committed;  // steps: {k, bytes from boundary k on}
//
// Boundaries run from just before the first event to index::kEndOfTrace
// (the last), evenly spaced in between. A version counts at boundary k iff
// t_from <= boundaries[k] < t_to (RegionsAt's rule), so the values at any
// boundary are exact and a growth between two boundaries is too. Stacks are
// credited by their creating call. `stacks` holds the `series_stacks`
// stacks with the most committed bytes at any boundary (then mapped bytes,
// then the earliest first call): a runtime's PROT_NONE reservation (a .NET
// GC's 48 GiB) does not outrank the stacks that hold memory. What the
// others hold is the totals' remainder. Cost: O(v log v) over the versions.
#ifndef PAGEBLAME_ANALYSIS_STACK_TIMELINE_H_
#define PAGEBLAME_ANALYSIS_STACK_TIMELINE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "processor/analysis/region_kind.h"
#include "processor/index/trace_index.h"

namespace pageblame::analysis {

// A value from boundary `k` on (until the next step).
struct TimelineStep {
  size_t k = 0;
  uint64_t bytes = 0;
};

// One creating stack's bytes over the boundaries (or, with no first call,
// those of the versions from before the trace).
struct StackSeries {
  EventId first_call;  // the stack's earliest creating call (by time, then id); invalid: before the trace
  // The kind of its largest committed version (else of its largest);
  // nullopt when it has no version alive at any boundary.
  std::optional<RegionKind> kind;
  // Steps where the value changes, ascending k; a stack starts at 0.
  std::vector<TimelineStep> mapped, committed;
  uint64_t max_mapped = 0, max_committed = 0;  // at any boundary
};

struct StackTimeline {
  std::vector<uint64_t> boundaries;         // buckets + 1, ascending; the last is index::kEndOfTrace
  std::vector<uint64_t> mapped, committed;  // the process's totals at each boundary
  StackSeries before_trace;                 // versions without a creating call
  std::vector<StackSeries> stacks;          // ranked, at most series_stacks
};

// `buckets` >= 1. `kind_of` says the series' kinds (KindClassifier::Function).
StackTimeline ComputeStackTimeline(const index::TraceIndex& idx, uint32_t process, size_t buckets,
                                   size_t series_stacks, const KindFunction& kind_of);

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_STACK_TIMELINE_H_

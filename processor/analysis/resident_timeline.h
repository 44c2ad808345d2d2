// The HTML report's resident bytes over time (render/report_data.h): one
// point per residency snapshot of the page's process, each the resident
// bytes of the regions alive at the snapshot's moment, split by the
// creating stacks that have a series of their own in the page
// (StackTimeline's), the rest as "other".
//
//   ResidentView view(rss, idx);
//   std::optional<ResidentTimeline> t = ComputeResidentTimeline(idx, view, process, series_stacks, 400);
//   // nullopt when the process has no snapshot; report_data.cc writes it
//   // {"times": [s, ...], "total": [bytes, ...],
//   //  "series": [{"stack": i | -1 (before trace), "bytes": [...]}]}
//
// total[k] is exactly the sum of `maps --json --at times[k]`'s "rss" for
// the process (the same regions, RegionsAt, and the same snapshot,
// ResidentView::SnapshotFor): a snapshot's unknown ranges (PROT_NONE,
// mapped after it) add nothing. More than `max_points` snapshots: evenly
// spaced ones, always with the last. Cost: O(points x regions alive x
// log(snapshot ranges)).
#ifndef PAGEBLAME_ANALYSIS_RESIDENT_TIMELINE_H_
#define PAGEBLAME_ANALYSIS_RESIDENT_TIMELINE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "processor/analysis/resident_view.h"
#include "processor/index/trace_index.h"

namespace pageblame::analysis {

// One stack's resident bytes at each point.
struct ResidentSeries {
  int stack;  // its place in `series_stacks`, or -1: regions made before the trace
  std::vector<uint64_t> bytes;
};

struct ResidentTimeline {
  std::vector<uint64_t> times;  // each point's snapshot time, ns, ascending
  std::vector<uint64_t> total;  // the process's resident bytes at each point
  // By stack place, -1 first; the regions of stacks without a series of
  // their own are in `total` only (the page draws them as "other").
  std::vector<ResidentSeries> series;
};

// `series_stacks`: the creating stacks with a series of their own, each
// once. nullopt when the process has no snapshot.
std::optional<ResidentTimeline> ComputeResidentTimeline(const index::TraceIndex& idx, const ResidentView& view,
                                                        uint32_t process, const std::vector<StackId>& series_stacks,
                                                        size_t max_points);

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_RESIDENT_TIMELINE_H_

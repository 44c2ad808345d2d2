// The HTML report's resident bytes over time (report_data.h): one point per
// residency snapshot of the page's process, each the resident bytes of the
// regions alive at the snapshot's moment, split by the stacks that have a
// series of their own in the page, the rest as "other".
//
//   ResidentView view(rss, idx);
//   std::optional<ResidentTimeline> t = ComputeResidentTimeline(idx, view, process, named, 400);
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

#include "absl/container/flat_hash_map.h"
#include "processor/analysis/resident_view.h"
#include "processor/index/trace_index.h"

namespace pageblame::report {

// One stack's resident bytes at each point.
struct ResidentSeries {
  int stack;  // its index in the page's stack list, or -1: regions made before the trace
  std::vector<uint64_t> bytes;
};

struct ResidentTimeline {
  std::vector<uint64_t> times;  // each point's snapshot time, ns, ascending
  std::vector<uint64_t> total;  // the process's resident bytes at each point
  // By stack index, -1 first; the regions of stacks without a series of
  // their own are in `total` only (the page draws them as "other").
  std::vector<ResidentSeries> series;
};

// `named`: the creating stacks with a series in the page, by their index in
// the page's stack list. nullopt when the process has no snapshot.
std::optional<ResidentTimeline> ComputeResidentTimeline(const index::TraceIndex& idx, const ResidentView& view,
                                                        uint32_t process,
                                                        const absl::flat_hash_map<StackId, int>& named,
                                                        size_t max_points);

}  // namespace pageblame::report

#endif  // PAGEBLAME_ANALYSIS_RESIDENT_TIMELINE_H_

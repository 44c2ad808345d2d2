// The HTML report's resident bytes over time (report_data.h): one point per
// residency snapshot of the page's process, each the resident bytes of the
// regions alive at the snapshot's moment, split by the stacks that have a
// series of their own in the page, the rest as "other".
//
//   ResidentView view(rss, idx);
//   Json r = ResidentTimeline(idx, view, process, named, 400);
//   // {"times": [s, ...], "total": [bytes, ...],
//   //  "series": [{"stack": i | -1 (before trace), "bytes": [...]}]}
//   // null when the process has no snapshot.
//
// total[k] is exactly the sum of `maps --json --at times[k]`'s "rss" for
// the process (the same regions, RegionsAt, and the same snapshot,
// ResidentView::SnapshotFor): a snapshot's unknown ranges (PROT_NONE,
// mapped after it) add nothing. More than `max_points` snapshots: evenly
// spaced ones, always with the last. Cost: O(points x regions alive x
// log(snapshot ranges)).
#ifndef PAGEBLAME_RENDER_RESIDENT_TIMELINE_H_
#define PAGEBLAME_RENDER_RESIDENT_TIMELINE_H_

#include <cstddef>
#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "processor/analysis/resident_view.h"
#include "processor/index/trace_index.h"
#include "processor/render/origin_renderer.h"

namespace pageblame::report {

// `named`: the creating stacks with a series in the page, by their index in
// the page's stack list.
Json ResidentTimeline(const index::TraceIndex& idx, const ResidentView& view, uint32_t process,
                      const absl::flat_hash_map<StackId, int>& named, size_t max_points);

}  // namespace pageblame::report

#endif  // PAGEBLAME_RENDER_RESIDENT_TIMELINE_H_

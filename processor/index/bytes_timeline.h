// Mapped and committed (accessible: prot other than PROT_NONE) bytes of a
// set of processes over time, as a step function: the answer of `maps --at
// T` summed, for every T at once. From the versions alone (each adds its
// size from t_from to t_to), O(v log v) for v versions.
//
//   BytesTimeline tl = BytesTimeline::Of(idx, {p});
//   BytesTimeline::Point peak = tl.Peak(/*committed=*/false);   // --at peak
//   uint64_t then = tl.At(t).mapped;                            // == maps --at t, summed
#ifndef PAGEBLAME_INDEX_BYTES_TIMELINE_H_
#define PAGEBLAME_INDEX_BYTES_TIMELINE_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "processor/index/trace_index.h"

namespace pageblame::index {

class BytesTimeline {
 public:
  struct Point {
    uint64_t time = 0;  // from this instant on (until the next point)
    uint64_t mapped = 0;
    uint64_t committed = 0;
  };

  // The sum over `processes`.
  static BytesTimeline Of(const TraceIndex& idx, const std::vector<uint32_t>& processes);
  // One timeline per process of `processes`, in that order, in one pass.
  static std::vector<BytesTimeline> OfEach(const TraceIndex& idx,
                                           const std::vector<uint32_t>& processes);

  // Sorted by time, one per instant at which the totals changed; the first
  // may be at time 0 (pages from before the trace).
  const std::vector<Point>& points() const { return points_; }
  // The totals at time t (everything that happened at or before t).
  Point At(uint64_t t) const;
  // The first instant at or after `since` with the most bytes mapped (or
  // committed); a zero point if nothing was ever mapped then.
  Point Peak(bool committed, uint64_t since = 0) const;

  BytesTimeline() = default;
  explicit BytesTimeline(std::vector<Point> points) : points_(std::move(points)) {}

 private:
  std::vector<Point> points_;
};

}  // namespace pageblame::index

#endif  // PAGEBLAME_INDEX_BYTES_TIMELINE_H_

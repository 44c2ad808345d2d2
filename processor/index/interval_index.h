// A static stabbing index over half-open intervals: "which intervals contain
// x?" in O(log n + k log n) for k answers. Built once after replay (the
// timeline is immutable then). Intervals sorted by start, with a segment tree
// of the maximum end over that order: subtrees whose max end <= x are skipped.
//
//   IntervalIndex idx;
//   idx.Build({{0x1000, 0x3000, 7}, {0x2000, 0x5000, 9}});
//   idx.Stab(0x2800, [](uint32_t payload) { ... });   // 7 and 9
#ifndef PAGEBLAME_INDEX_INTERVAL_INDEX_H_
#define PAGEBLAME_INDEX_INTERVAL_INDEX_H_

#include <cstdint>
#include <functional>
#include <vector>

namespace pageblame::index {

class IntervalIndex {
 public:
  struct Interval {
    uint64_t start;
    uint64_t end;
    uint32_t payload;
  };

  void Build(std::vector<Interval> intervals);
  // Calls `fn(payload)` for every interval with start <= x < end, in start
  // order (equal starts: by payload).
  void Stab(uint64_t x, const std::function<void(uint32_t)>& fn) const;
  // Every interval in start order (for "all regions at time T" scans).
  const std::vector<Interval>& sorted() const { return sorted_; }
  size_t bytes() const {
    return sorted_.capacity() * sizeof(Interval) + max_end_.capacity() * sizeof(uint64_t);
  }

 private:
  void StabNode(size_t node, size_t lo, size_t hi, size_t limit, uint64_t x,
                const std::function<void(uint32_t)>& fn) const;
  std::vector<Interval> sorted_;
  std::vector<uint64_t> max_end_;  // segment tree, node 1 = root over [0, n)
};

}  // namespace pageblame::index

#endif  // PAGEBLAME_INDEX_INTERVAL_INDEX_H_

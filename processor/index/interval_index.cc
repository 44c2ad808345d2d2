#include "processor/index/interval_index.h"

#include <algorithm>

namespace pageblame::index {

void IntervalIndex::Build(std::vector<Interval> intervals) {
  sorted_ = std::move(intervals);
  // Payloads are distinct, so (start, payload) orders like a stable sort by
  // start of intervals given in payload order, without its buffer.
  std::sort(sorted_.begin(), sorted_.end(), [](const Interval& a, const Interval& b) {
    return a.start != b.start ? a.start < b.start : a.payload < b.payload;
  });
  max_end_.assign(4 * std::max<size_t>(sorted_.size(), 1), 0);
  // Iterative build would be shorter to read wrong; a recursive fill is clear.
  std::function<uint64_t(size_t, size_t, size_t)> fill = [&](size_t node, size_t lo,
                                                              size_t hi) -> uint64_t {
    if (hi - lo == 1) return max_end_[node] = sorted_[lo].end;
    size_t mid = (lo + hi) / 2;
    return max_end_[node] = std::max(fill(2 * node, lo, mid), fill(2 * node + 1, mid, hi));
  };
  if (!sorted_.empty()) fill(1, 0, sorted_.size());
}

void IntervalIndex::StabNode(size_t node, size_t lo, size_t hi, size_t limit, uint64_t x,
                             const std::function<void(uint32_t)>& fn) const {
  if (lo >= limit || max_end_[node] <= x) return;
  if (hi - lo == 1) {
    fn(sorted_[lo].payload);  // start <= x (lo < limit) and end > x
    return;
  }
  size_t mid = (lo + hi) / 2;
  StabNode(2 * node, lo, mid, limit, x, fn);
  StabNode(2 * node + 1, mid, hi, limit, x, fn);
}

void IntervalIndex::Stab(uint64_t x, const std::function<void(uint32_t)>& fn) const {
  if (sorted_.empty()) return;
  // Only intervals with start <= x can contain x: a prefix of the sorted order.
  size_t limit = std::upper_bound(sorted_.begin(), sorted_.end(), x,
                                  [](uint64_t v, const Interval& i) { return v < i.start; }) -
                 sorted_.begin();
  StabNode(1, 0, sorted_.size(), limit, x, fn);
}

}  // namespace pageblame::index

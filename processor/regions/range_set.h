// RangeSet: a set of addresses stored as disjoint half-open ranges
// [start, end), kept coalesced (no two ranges overlap or touch) in an
// absl::btree_map keyed by start.
//
//   RangeSet s;
//   s.Add(0x1000, 0x3000);
//   s.Add(0x3000, 0x4000);        // touches: now one range [0x1000, 0x4000)
//   s.Subtract(0x2000, 0x2800);   // [0x1000,0x2000) [0x2800,0x4000)
//   s.Contains(0x2400);           // false
//   s.TotalBytes();               // 0x2800
//   s.Gaps(0x0, 0x5000);          // [0,0x1000) [0x2000,0x2800) [0x4000,0x5000)
//
// Empty ranges (start >= end) are ignored. Add/Subtract cost O(log n + k)
// for k ranges touched; Intersect and Gaps are linear in what they visit.
// Iterators are invalidated by Add/Subtract (btree semantics).
#ifndef PAGEBLAME_REGIONS_RANGE_SET_H_
#define PAGEBLAME_REGIONS_RANGE_SET_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"

namespace pageblame::regions {

class RangeSet {
 public:
  using Range = std::pair<uint64_t, uint64_t>;  // [first, second)
  using Map = absl::btree_map<uint64_t, uint64_t>;

  void Add(uint64_t start, uint64_t end);
  void Subtract(uint64_t start, uint64_t end);
  void Add(const RangeSet& other);
  void Subtract(const RangeSet& other);
  RangeSet Intersect(const RangeSet& other) const;

  bool Contains(uint64_t address) const;
  // True if every byte of [start, end) is in the set (vacuously for empty).
  bool Covers(uint64_t start, uint64_t end) const;
  // The parts of [start, end) NOT in the set, in address order.
  std::vector<Range> Gaps(uint64_t start, uint64_t end) const;

  uint64_t TotalBytes() const;
  size_t size() const { return ranges_.size(); }  // number of disjoint ranges
  bool empty() const { return ranges_.empty(); }
  Map::const_iterator begin() const { return ranges_.begin(); }
  Map::const_iterator end() const { return ranges_.end(); }

  friend bool operator==(const RangeSet& a, const RangeSet& b) { return a.ranges_ == b.ranges_; }

 private:
  Map ranges_;
};

}  // namespace pageblame::regions

#endif  // PAGEBLAME_REGIONS_RANGE_SET_H_

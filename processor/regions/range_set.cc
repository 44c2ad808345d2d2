#include "processor/regions/range_set.h"

#include <algorithm>

namespace pageblame::regions {

void RangeSet::Add(uint64_t start, uint64_t end) {
  if (start >= end) return;
  // Absorb a predecessor that overlaps or touches [start, end).
  auto it = ranges_.upper_bound(start);
  if (it != ranges_.begin()) {
    auto prev = std::prev(it);
    // Already in the set: the common case when a history is added range by
    // range (the same addresses mapped again and again).
    if (prev->second >= end) return;
    if (prev->second >= start) {
      start = prev->first;
      end = std::max(end, prev->second);
      it = ranges_.erase(prev);
    }
  }
  // Absorb every following range that starts at or before the new end.
  while (it != ranges_.end() && it->first <= end) {
    end = std::max(end, it->second);
    it = ranges_.erase(it);
  }
  ranges_.emplace(start, end);
}

void RangeSet::Subtract(uint64_t start, uint64_t end) {
  if (start >= end) return;
  // A predecessor reaching into [start, end): keep its head, maybe its tail.
  auto it = ranges_.upper_bound(start);
  if (it != ranges_.begin()) {
    auto prev = std::prev(it);
    if (prev->second > start) {
      uint64_t prev_start = prev->first, prev_end = prev->second;
      ranges_.erase(prev);
      if (prev_start < start) ranges_.emplace(prev_start, start);
      if (prev_end > end) ranges_.emplace(end, prev_end);
      if (prev_end >= end) return;
    }
  }
  // Ranges starting inside [start, end): drop them, keeping a tail past end.
  it = ranges_.lower_bound(start);
  while (it != ranges_.end() && it->first < end) {
    uint64_t tail_end = it->second;
    it = ranges_.erase(it);
    if (tail_end > end) {
      ranges_.emplace(end, tail_end);
      break;
    }
  }
}

void RangeSet::Add(const RangeSet& other) {
  for (const auto& [s, e] : other.ranges_) Add(s, e);
}

void RangeSet::Subtract(const RangeSet& other) {
  for (const auto& [s, e] : other.ranges_) Subtract(s, e);
}

RangeSet RangeSet::Intersect(const RangeSet& other) const {
  RangeSet out;
  auto a = ranges_.begin();
  auto b = other.ranges_.begin();
  while (a != ranges_.end() && b != other.ranges_.end()) {
    uint64_t s = std::max(a->first, b->first);
    uint64_t e = std::min(a->second, b->second);
    if (s < e) out.ranges_.emplace_hint(out.ranges_.end(), s, e);
    // Both sets are coalesced, so pieces cut from them never touch each other.
    if (a->second < b->second) ++a;
    else ++b;
  }
  return out;
}

bool RangeSet::Contains(uint64_t address) const {
  auto it = ranges_.upper_bound(address);
  if (it == ranges_.begin()) return false;
  return std::prev(it)->second > address;
}

bool RangeSet::Covers(uint64_t start, uint64_t end) const {
  if (start >= end) return true;
  auto it = ranges_.upper_bound(start);
  if (it == ranges_.begin()) return false;
  --it;
  // Coalesced: one range must hold all of [start, end).
  return it->first <= start && it->second >= end;
}

std::vector<RangeSet::Range> RangeSet::Gaps(uint64_t start, uint64_t end) const {
  std::vector<Range> gaps;
  if (start >= end) return gaps;
  uint64_t cursor = start;
  auto it = ranges_.upper_bound(start);
  if (it != ranges_.begin()) --it;  // the range holding start, if any
  for (; it != ranges_.end() && it->first < end; ++it) {
    if (it->second <= cursor) continue;
    if (it->first > cursor) gaps.emplace_back(cursor, it->first);
    cursor = it->second;
    if (cursor >= end) return gaps;
  }
  if (cursor < end) gaps.emplace_back(cursor, end);
  return gaps;
}

uint64_t RangeSet::TotalBytes() const {
  uint64_t total = 0;
  for (const auto& [s, e] : ranges_) total += e - s;
  return total;
}

}  // namespace pageblame::regions

#include "processor/residency/residency_snapshot.h"

#include <algorithm>

namespace pageblame::residency {

absl::string_view ReasonName(SnapshotReason r) {
  switch (r) {
    case SnapshotReason::kPeriodic: return "periodic";
    case SnapshotReason::kRequested: return "requested";
    case SnapshotReason::kStop: return "stop";
    case SnapshotReason::kExit: return "exit";
  }
  return "unknown";
}

void AppendRange(std::vector<PageRange>* v, uint64_t start, uint64_t end) {
  if (!v->empty() && v->back().end == start) {
    v->back().end = end;
  } else {
    v->push_back({start, end});
  }
}

RangeTally::RangeTally(std::vector<PageRange> ranges) : ranges_(std::move(ranges)) {
  before_.reserve(ranges_.size());
  uint64_t sum = 0;
  for (const PageRange& r : ranges_) {
    before_.push_back(sum);
    sum += r.size();
  }
}

uint64_t RangeTally::BytesBelow(uint64_t addr) const {
  // The first range that ends after addr: everything before it is below.
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), addr,
                             [](uint64_t a, const PageRange& r) { return a < r.end; });
  const size_t i = it - ranges_.begin();
  if (i == ranges_.size()) return total();
  return before_[i] + (addr > it->start ? addr - it->start : 0);
}

uint64_t RangeTally::BytesIn(uint64_t start, uint64_t end) const {
  if (end <= start) return 0;
  return BytesBelow(end) - BytesBelow(start);
}

bool RangeTally::Contains(uint64_t addr) const { return BytesIn(addr, addr + 1) == 1; }

}  // namespace pageblame::residency

#include "processor/index/bytes_timeline.h"

#include <algorithm>

#include "processor/index/committed.h"

namespace pageblame::index {
namespace {

struct Change {
  uint64_t time;
  int64_t mapped;
  int64_t committed;
};

// The totals after each instant of `changes` (sorted here).
BytesTimeline FromChanges(std::vector<Change> changes) {
  std::sort(changes.begin(), changes.end(),
            [](const Change& a, const Change& b) { return a.time < b.time; });
  std::vector<BytesTimeline::Point> points;
  int64_t mapped = 0, committed = 0;
  for (size_t i = 0; i < changes.size();) {
    const uint64_t t = changes[i].time;
    for (; i < changes.size() && changes[i].time == t; ++i) {
      mapped += changes[i].mapped;
      committed += changes[i].committed;
    }
    const BytesTimeline::Point p{t, static_cast<uint64_t>(mapped), static_cast<uint64_t>(committed)};
    // A change in place (a prot split, a move) leaves the totals as they were.
    if (!points.empty() && points.back().mapped == p.mapped && points.back().committed == p.committed) {
      continue;
    }
    points.push_back(p);
  }
  return BytesTimeline(std::move(points));
}

// Calls add(slot, change) for each version of a process in `processes`
// (slot: its position there).
template <typename Add>
void ForEachChange(const TraceIndex& idx, const std::vector<uint32_t>& processes, Add add) {
  std::vector<int> slot(idx.num_processes(), -1);
  for (size_t i = 0; i < processes.size(); ++i) {
    if (processes[i] < slot.size()) slot[processes[i]] = static_cast<int>(i);
  }
  for (uint32_t i = 0; i < idx.num_versions(); ++i) {
    const Version& v = idx.version(VersionId(i));
    if (slot[v.process] < 0 || v.t_from == v.t_to) continue;
    const int64_t size = static_cast<int64_t>(v.end - v.start);
    const int64_t committed = IsCommitted(v) ? size : 0;
    add(slot[v.process], Change{v.t_from, size, committed});
    if (v.t_to != kEndOfTrace) add(slot[v.process], Change{v.t_to, -size, -committed});
  }
}

}  // namespace

BytesTimeline BytesTimeline::Of(const TraceIndex& idx, const std::vector<uint32_t>& processes) {
  std::vector<Change> changes;
  ForEachChange(idx, processes, [&](int, const Change& c) { changes.push_back(c); });
  return FromChanges(std::move(changes));
}

std::vector<BytesTimeline> BytesTimeline::OfEach(const TraceIndex& idx,
                                                 const std::vector<uint32_t>& processes) {
  std::vector<std::vector<Change>> changes(processes.size());
  ForEachChange(idx, processes, [&](int slot, const Change& c) { changes[slot].push_back(c); });
  std::vector<BytesTimeline> out;
  for (std::vector<Change>& c : changes) out.push_back(FromChanges(std::move(c)));
  return out;
}

BytesTimeline::Point BytesTimeline::At(uint64_t t) const {
  auto it = std::upper_bound(points_.begin(), points_.end(), t,
                             [](uint64_t x, const Point& p) { return x < p.time; });
  if (it == points_.begin()) return Point{t, 0, 0};
  return *std::prev(it);
}

BytesTimeline::Point BytesTimeline::Peak(bool committed, uint64_t since) const {
  Point best = At(since);
  best.time = since;
  bool any = since > 0;
  for (const Point& p : points_) {
    if (p.time < since) continue;
    const uint64_t v = committed ? p.committed : p.mapped;
    if (!any || v > (committed ? best.committed : best.mapped)) best = p, any = true;
  }
  return best;
}

}  // namespace pageblame::index

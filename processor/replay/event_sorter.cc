#include "processor/replay/event_sorter.h"

#include <algorithm>

namespace pageblame::replay {

void EventSorter::Push(const TraceEvent& e) {
  max_time_ = std::max(max_time_, e.time);
  buffer_.push_back(e);
  if (buffer_.size() >= kMaxBuffered) {
    // No rounds to go by: deliver the older half, keeping a window for
    // stragglers from other CPUs.
    std::vector<uint64_t> times;
    times.reserve(buffer_.size());
    for (const TraceEvent& b : buffer_) times.push_back(b.time);
    auto mid = times.begin() + times.size() / 2;
    std::nth_element(times.begin(), mid, times.end());
    FlushUpTo(*mid);
  }
}

void EventSorter::FinishedRound() {
  if (have_round_) FlushUpTo(next_flush_);
  next_flush_ = max_time_;
  have_round_ = true;
}

void EventSorter::FlushAll() { FlushUpTo(UINT64_MAX); }

void EventSorter::FlushUpTo(uint64_t limit) {
  // Only the events that are due get ordered, as 16-byte keys rather than
  // 100-byte events; the rest stay in the buffer in push (file) order.
  keys_.clear();
  runs_.clear();
  runs_.push_back(0);
  uint64_t prev = 0;
  for (uint32_t i = 0; i < buffer_.size(); ++i) {
    const uint64_t t = buffer_[i].time;
    if (t > limit) continue;
    if (t < prev) runs_.push_back(keys_.size());
    prev = t;
    keys_.push_back(Key{t, i});
  }
  runs_.push_back(keys_.size());
  OrderKeys();
  for (const Key& k : keys_) {
    const TraceEvent& e = buffer_[k.index];
    if (e.time < last_delivered_) ++out_of_order_;
    last_delivered_ = std::max(last_delivered_, e.time);
    sink_(e);
  }
  if (keys_.size() == buffer_.size()) {
    buffer_.clear();
    return;
  }
  // Keep the events not yet due, in push order.
  size_t kept = 0;
  for (size_t i = 0; i < buffer_.size(); ++i) {
    if (buffer_[i].time > limit) buffer_[kept++] = buffer_[i];
  }
  buffer_.resize(kept);
}

void EventSorter::OrderKeys() {
  // perf writes each CPU's ring buffer in time order, so the due events are a
  // few sorted runs (about one per CPU and round): merging them is linear in
  // practice. Merges are stable and only ever join neighbouring runs, so
  // equal times stay in push (file) order, as perf's own sort keeps them.
  const size_t runs = runs_.size() - 1;
  if (runs <= 1) return;
  if (runs > kMaxRuns) {  // not perf's shape: just sort
    std::sort(keys_.begin(), keys_.end(), [](const Key& a, const Key& b) {
      return a.time != b.time ? a.time < b.time : a.index < b.index;
    });
    return;
  }
  auto by_time = [](const Key& a, const Key& b) { return a.time < b.time; };
  std::vector<size_t> next;
  while (runs_.size() > 2) {
    next.assign(1, 0);
    for (size_t i = 0; i + 2 < runs_.size(); i += 2) {
      std::inplace_merge(keys_.begin() + runs_[i], keys_.begin() + runs_[i + 1],
                         keys_.begin() + runs_[i + 2], by_time);
      next.push_back(runs_[i + 2]);
    }
    if (next.back() != runs_.back()) next.push_back(runs_.back());
    runs_.swap(next);
  }
}

}  // namespace pageblame::replay

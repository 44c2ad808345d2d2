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
  // Sort 16-byte keys, not the 100-byte events: the buffer stays in push
  // order, so sorting by (time, index) is stable in file order.
  keys_.clear();
  keys_.reserve(buffer_.size());
  bool sorted = true;
  for (uint32_t i = 0; i < buffer_.size(); ++i) {
    if (i > 0 && buffer_[i].time < buffer_[i - 1].time) sorted = false;
    keys_.push_back(Key{buffer_[i].time, i});
  }
  if (!sorted) {
    std::sort(keys_.begin(), keys_.end(), [](const Key& a, const Key& b) {
      return a.time != b.time ? a.time < b.time : a.index < b.index;
    });
  }
  size_t n = 0;
  while (n < keys_.size() && keys_[n].time <= limit) {
    const TraceEvent& e = buffer_[keys_[n].index];
    if (e.time < last_delivered_) ++out_of_order_;
    last_delivered_ = std::max(last_delivered_, e.time);
    sink_(e);
    ++n;
  }
  if (n == keys_.size()) {
    buffer_.clear();
    return;
  }
  // Keep the rest in push order (so later sorts stay stable).
  std::vector<uint32_t> rest;
  rest.reserve(keys_.size() - n);
  for (size_t k = n; k < keys_.size(); ++k) rest.push_back(keys_[k].index);
  std::sort(rest.begin(), rest.end());
  for (size_t k = 0; k < rest.size(); ++k) buffer_[k] = buffer_[rest[k]];
  buffer_.resize(rest.size());
}

}  // namespace pageblame::replay

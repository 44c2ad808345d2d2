#include "processor/replay/event_sorter.h"

#include <algorithm>

namespace pageblame::replay {

void EventSorter::Push(TraceEvent e) {
  e.seq = seq_++;
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
  std::stable_sort(buffer_.begin(), buffer_.end(), [](const TraceEvent& a, const TraceEvent& b) {
    return a.time != b.time ? a.time < b.time : a.seq < b.seq;
  });
  size_t n = 0;
  while (n < buffer_.size() && buffer_[n].time <= limit) {
    const TraceEvent& e = buffer_[n];
    if (e.time < last_delivered_) ++out_of_order_;
    last_delivered_ = std::max(last_delivered_, e.time);
    sink_(e);
    ++n;
  }
  buffer_.erase(buffer_.begin(), buffer_.begin() + n);
}

}  // namespace pageblame::replay

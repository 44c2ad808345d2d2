#include "processor/replay/event_sorter.h"

#include <algorithm>

namespace pageblame::replay {

namespace {
// A chunk for single pushes: big enough that pushing costs no reallocation
// to speak of, small enough for a test's handful of events.
constexpr size_t kSingleChunk = 1 << 12;
}  // namespace

void EventSorter::Push(const TraceEvent& e) {
  if (chunks_.empty() || chunks_.back().size() >= kSingleChunk) {
    Chunk c;
    if (!spares_.empty()) {
      c = std::move(spares_.back());
      spares_.pop_back();
    }
    chunks_.push_back(std::move(c));
  }
  max_time_ = std::max(max_time_, e.time);
  chunks_.back().push_back(e);
  if (++waiting_ >= kMaxBuffered) {
    // No rounds to go by: deliver the older half, keeping a window for
    // stragglers from other CPUs.
    std::vector<uint64_t> times;
    times.reserve(waiting_);
    for (const Chunk& c : chunks_) {
      for (const TraceEvent& b : c) times.push_back(b.time);
    }
    auto mid = times.begin() + times.size() / 2;
    std::nth_element(times.begin(), mid, times.end());
    FlushUpTo(*mid);
  }
}

void EventSorter::Push(std::vector<TraceEvent>&& batch) {
  if (batch.size() + waiting_ >= kMaxBuffered) {
    // Rare (no rounds in the trace): the one-event path checks the bound.
    for (const TraceEvent& e : batch) Push(e);
    batch.clear();
    spares_.push_back(std::move(batch));
    return;
  }
  if (batch.empty()) {
    spares_.push_back(std::move(batch));
    return;
  }
  for (const TraceEvent& e : batch) max_time_ = std::max(max_time_, e.time);
  waiting_ += batch.size();
  chunks_.push_back(std::move(batch));
}

std::vector<std::vector<TraceEvent>> EventSorter::TakeSpares() {
  std::vector<std::vector<TraceEvent>> out;
  out.swap(spares_);
  return out;
}

void EventSorter::FinishedRound() {
  if (have_round_) FlushUpTo(next_flush_);
  next_flush_ = max_time_;
  have_round_ = true;
}

void EventSorter::FlushAll() { FlushUpTo(UINT64_MAX); }

void EventSorter::FlushUpTo(uint64_t limit) {
  // Only the events that are due get ordered, as 16-byte keys rather than
  // 100-byte events; the rest stay where they are, in push (file) order.
  keys_.clear();
  runs_.clear();
  runs_.push_back(0);
  uint64_t prev = 0;
  for (uint32_t c = 0; c < chunks_.size(); ++c) {
    const Chunk& chunk = chunks_[c];
    for (uint32_t i = 0; i < chunk.size(); ++i) {
      const uint64_t t = chunk[i].time;
      if (t > limit) continue;
      if (t < prev) runs_.push_back(keys_.size());
      prev = t;
      keys_.push_back(Key{t, c, i});
    }
  }
  runs_.push_back(keys_.size());
  if (keys_.empty()) return;
  OrderKeys();
  for (const Key& k : keys_) {
    const TraceEvent& e = chunks_[k.chunk][k.offset];
    if (e.time < last_delivered_) ++out_of_order_;
    last_delivered_ = std::max(last_delivered_, e.time);
    sink_(e);
  }
  waiting_ -= keys_.size();
  // Keep the events not yet due, in push order; hand back emptied batches.
  std::vector<Chunk> kept;
  for (Chunk& chunk : chunks_) {
    size_t n = 0;
    for (size_t i = 0; i < chunk.size(); ++i) {
      if (chunk[i].time > limit) {
        if (n != i) chunk[n] = chunk[i];
        ++n;
      }
    }
    chunk.resize(n);
    if (n == 0) {
      spares_.push_back(std::move(chunk));
    } else {
      kept.push_back(std::move(chunk));
    }
  }
  chunks_.swap(kept);
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
      if (a.time != b.time) return a.time < b.time;
      return a.chunk != b.chunk ? a.chunk < b.chunk : a.offset < b.offset;
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

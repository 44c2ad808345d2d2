#include "processor/replay/lane_sorter.h"

#include <algorithm>

#include "processor/replay/event_sorter.h"

namespace pageblame::replay {

LaneSorter::LaneSorter(uint32_t cpus, Sink sink)
    : sink_(std::move(sink)), lanes_(std::min(std::max(cpus, 1u), kMaxLanes)) {}

void LaneSorter::Push(std::vector<TraceEvent>&& batch) {
  if (diverged_ || batch.empty()) {
    batch.clear();
    spares_.push_back(std::move(batch));
    return;
  }
  const uint32_t chunk = first_chunk_ + static_cast<uint32_t>(chunks_.size());
  const uint64_t first_seq = seq_;
  for (uint32_t i = 0; i < batch.size(); ++i) {
    const TraceEvent& e = batch[i];
    const uint64_t parts = e.kind == TraceEvent::Kind::kCall ? 2 : 1;
    // Each check is a case where the event would not be in (time, file
    // order) position: behind what this rule already delivered, behind what
    // perf's rule would have delivered, or past the count at which
    // EventSorter flushes without rounds. (A kCall's exit half is no older
    // than its enter half, and comes right after it in the file.)
    if (e.time < last_delivered_ || e.time < perf_limit_ ||
        seq_ + parts - pushed_at_round_[0] >= EventSorter::kMaxBuffered) {
      diverged_ = true;
      batch.clear();
      spares_.push_back(std::move(batch));
      return;
    }
    const uint64_t last = LastTime(e);
    max_time_ = std::max(max_time_, last);
    const Key k{e.time, seq_, chunk, i};
    seq_ += parts;
    Lane* lane = e.cpu < lanes_.size() ? &lanes_[e.cpu] : &no_cpu_;
    AddToLane(lane, k);
    lane->newest = std::max(lane->newest, last);
  }
  const size_t deliveries = seq_ - first_seq;  // a kCall counts two
  held_ += deliveries;
  chunks_.push_back(Chunk{std::move(batch), deliveries});
  UpdateLimit();
}

void LaneSorter::AddToLane(Lane* lane, const Key& k) {
  // A lane is in (time, file order) order.
  if (lane->keys.empty() || OrderOf(lane->keys.back()) < OrderOf(k)) {
    lane->keys.push_back(k);
    return;
  }
  // Out of order within its CPU (rare), or a kCall's exit half behind a
  // key newer than its enter.
  auto at = std::upper_bound(lane->keys.begin(), lane->keys.end(), OrderOf(k),
                             [](const Order& o, const Key& x) { return o < OrderOf(x); });
  lane->keys.insert(at, k);
}

void LaneSorter::FinishedRound() {
  if (diverged_) return;
  if (have_round_) perf_limit_ = next_flush_;
  next_flush_ = max_time_;
  have_round_ = true;
  pushed_at_round_[0] = pushed_at_round_[1];
  pushed_at_round_[1] = seq_;
  UpdateLimit();
}

void LaneSorter::UpdateLimit() {
  if (finished_) return;
  // Every event still to come is at least as new as its CPU's newest so far
  // and (perf's assumption) newer than perf's last flush limit.
  uint64_t limit = UINT64_MAX;
  for (const Lane& lane : lanes_) limit = std::min(limit, std::max(lane.newest, perf_limit_));
  limit_ = limit;
}

bool LaneSorter::IsDue(const Lane& lane) const {
  return !lane.keys.empty() && lane.keys.front().time <= limit_;
}

LaneSorter::Lane* LaneSorter::NextDue(Order* until) {
  Lane* best = nullptr;
  // The head of every other lane, due or not: the run from `best` ends
  // before the first of them.
  *until = {UINT64_MAX, UINT64_MAX};
  auto consider = [&](Lane& lane) {
    if (lane.keys.empty()) return;
    const Order head = OrderOf(lane.keys.front());
    if (IsDue(lane) && (!best || head < OrderOf(best->keys.front()))) {
      if (best) *until = std::min(*until, OrderOf(best->keys.front()));
      best = &lane;
    } else {
      *until = std::min(*until, head);
    }
  };
  for (Lane& lane : lanes_) consider(lane);
  consider(no_cpu_);
  return best;
}

bool LaneSorter::HasDue() const {
  if (diverged_) return false;
  for (const Lane& lane : lanes_) {
    if (IsDue(lane)) return true;
  }
  return IsDue(no_cpu_);
}

size_t LaneSorter::Deliver(size_t max) {
  if (diverged_) return 0;
  size_t n = 0;
  while (n < max) {
    Order until;
    Lane* lane = NextDue(&until);
    if (!lane) break;
    // A run of this lane's keys: due, and before every other lane's head.
    do {
      const Key k = lane->keys.front();
      Chunk& c = chunks_[k.chunk - first_chunk_];
      const TraceEvent& e = c.events[k.offset & ~kExitPart];
      const bool exit_part = (k.offset & kExitPart) != 0;
      if (e.kind == TraceEvent::Kind::kCall && !exit_part) {
        // The exit half takes the place the exit's own key would have had
        // (and keeps the chunk's count above 0 until it is out): nearly
        // always still the lane's first, so the key is rewritten in place.
        const Key x{e.call().exit_time, k.seq + 1, k.chunk, k.offset | kExitPart};
        if (lane->keys.size() == 1 || OrderOf(x) < OrderOf(lane->keys[1])) {
          lane->keys.front() = x;
        } else {
          lane->keys.pop_front();
          AddToLane(lane, x);
        }
      } else {
        lane->keys.pop_front();
      }
      sink_(e, exit_part);
      last_delivered_ = k.time;
      ++n;
      if (--c.left == 0) {
        // Handed back as soon as it is done; the slot goes when it reaches
        // the front.
        c.events.clear();
        spares_.push_back(std::move(c.events));
        while (!chunks_.empty() && chunks_.front().left == 0) {
          chunks_.pop_front();
          ++first_chunk_;
        }
      }
    } while (n < max && IsDue(*lane) && OrderOf(lane->keys.front()) < until);
  }
  held_ -= n;
  return n;
}

void LaneSorter::FlushAll() {
  finished_ = true;
  limit_ = UINT64_MAX;
  while (Deliver(SIZE_MAX) > 0) {
  }
}

std::vector<std::vector<TraceEvent>> LaneSorter::TakeSpares() {
  std::vector<std::vector<TraceEvent>> out;
  out.swap(spares_);
  return out;
}

}  // namespace pageblame::replay

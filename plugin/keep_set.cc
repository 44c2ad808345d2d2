#include "plugin/keep_set.h"

#include <algorithm>

namespace pageblame::plugin {

void KeepSet::Add(const index::CallEvent& ev, EventId id) {
  // A call replayed from a trace without enter times still has its exit time.
  uint64_t first = ev.first_time != 0 ? std::min(ev.first_time, ev.time) : ev.time;
  uint64_t last = std::max(ev.last_time, ev.time);
  by_tid_[ev.tid].push_back(Span{first, last, id});
}

void KeepSet::Finalize() {
  calls_ = 0;
  for (auto& [tid, spans] : by_tid_) {
    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
      return a.first != b.first ? a.first < b.first : a.id < b.id;
    });
    spans.erase(std::unique(spans.begin(), spans.end(),
                            [](const Span& a, const Span& b) { return a.id == b.id; }),
                spans.end());
    calls_ += spans.size();
  }
}

std::vector<EventId> KeepSet::Ids() const {
  std::vector<EventId> out;
  out.reserve(calls_);
  for (const auto& [tid, spans] : by_tid_) {
    for (const Span& s : spans) out.push_back(s.id);
  }
  return out;
}

EventId KeepSet::Find(uint32_t tid, uint64_t time, bool* is_last) const {
  if (is_last != nullptr) *is_last = false;
  auto it = by_tid_.find(tid);
  if (it == by_tid_.end()) return EventId::Invalid();
  const std::vector<Span>& spans = it->second;
  // The last span starting at or before `time`; spans of one thread do not
  // overlap (one syscall at a time).
  auto next = std::upper_bound(spans.begin(), spans.end(), time,
                               [](uint64_t t, const Span& s) { return t < s.first; });
  if (next == spans.begin()) return EventId::Invalid();
  const Span& s = *std::prev(next);
  if (time > s.last) return EventId::Invalid();
  if (is_last != nullptr) *is_last = time == s.last;
  return s.id;
}

}  // namespace pageblame::plugin

#include "processor/index/trace_index.h"

#include <algorithm>
#include <cassert>
#include <utility>

namespace pageblame::index {

EventId TraceIndex::AddEvent(const CallEvent& e) {
  CallRecord r = CallRecord::Unpacked();
  const bool packed = CallRecord::Pack(e, &r);
  const EventId id(static_cast<uint32_t>(events_.push_back(r)));
  if (!packed) unpacked_[id.value()] = e;
  return id;
}

void TraceIndex::SetEvent(EventId id, const CallEvent& e) {
  CallRecord& r = events_[id.value()];
  if (CallRecord::Pack(e, &r)) {
    unpacked_.erase(id.value());
  } else {
    r = CallRecord::Unpacked();
    unpacked_[id.value()] = e;
  }
}

VersionId TraceIndex::AddVersion(const Version& v) {
  return VersionId(static_cast<uint32_t>(versions_.push_back(v)));
}

uint32_t TraceIndex::AddProcess(const Process& p) {
  processes_.push_back(p);
  uint32_t i = static_cast<uint32_t>(processes_.size() - 1);
  pid_to_processes_[p.pid].push_back(i);
  return i;
}

const std::vector<IntervalIndex>& TraceIndex::intervals() const {
  // Before Finalize() the tables are still growing: nothing to build yet.
  if (!finalized_) return by_process_;
  std::call_once(intervals_once_, [this] { BuildIntervals(); });
  return by_process_;
}

void TraceIndex::BuildIntervals() const {
  std::vector<std::vector<IntervalIndex::Interval>> per(processes_.size());
  for (uint32_t i = 0; i < versions_.size(); ++i) {
    const Version& v = versions_[i];
    per[v.process].push_back({v.start, v.end, i});
  }
  by_process_.resize(processes_.size());
  for (size_t p = 0; p < per.size(); ++p) by_process_[p].Build(std::move(per[p]));
}

IndexThinning TraceIndex::ThinBefore(uint64_t cutoff) {
  assert(!finalized_);  // the interval indexes would name the old ids
  IndexThinning n = IndexThinning::At(*this, cutoff, &stats_);
  // Kept entries keep their order, so each moves to a slot at or before its
  // own: one pass from the front, then the tail's blocks are given back.
  size_t kept = 0;
  absl::flat_hash_map<uint32_t, CallEvent> unpacked;
  for (size_t i = 0; i < events_.size(); ++i) {
    if (!n.KeepsEvent(i)) continue;
    if (!events_[i].packed()) unpacked[static_cast<uint32_t>(kept)] = unpacked_.at(static_cast<uint32_t>(i));
    events_[kept++] = events_[i];
  }
  unpacked_ = std::move(unpacked);
  thinned_events_ += events_.size() - kept;
  events_.Truncate(kept);
  kept = 0;
  for (size_t i = 0; i < versions_.size(); ++i) {
    if (!n.KeepsVersion(i)) continue;
    Version v = versions_[i];
    for (EventId* e : {&v.origin, &v.commit, &v.begin_event, &v.end_event}) *e = n.Event(*e);
    v.prev = n.Version(v.prev);  // a prev left out is lost, as in a thinned file
    versions_[kept++] = v;
  }
  thinned_versions_ += versions_.size() - kept;
  versions_.Truncate(kept);
  for (Process& p : processes_) {
    p.unknown_break_event = n.Event(p.unknown_break_event);
    for (auto& entry : p.live) entry.second.version = n.Version(entry.second.version);
    // The madvise calls kept are those whose call is.
    p.advice.erase(std::remove_if(p.advice.begin(), p.advice.end(),
                                  [&](const Advice& a) { return !n.Event(a.event).valid(); }),
                   p.advice.end());
    for (Advice& a : p.advice) a.event = n.Event(a.event);
    p.advice.shrink_to_fit();
  }
  return n;
}

size_t TraceIndex::MemoryBytes() const {
  size_t n = events_.bytes() + versions_.bytes() + stacks_.bytes() + strings_.bytes();
  n += unpacked_.capacity() * (sizeof(std::pair<uint32_t, CallEvent>) + 1);
  n += event_blocks_.ready() * event_blocks_.block_bytes() +
       version_blocks_.ready() * version_blocks_.block_bytes();
  n += processes_.capacity() * sizeof(Process);
  for (const Process& p : processes_) n += LiveBytes(p) + p.advice.capacity() * sizeof(Advice);
  for (const IntervalIndex& ii : by_process_) n += ii.bytes();
  return n;
}

size_t TraceIndex::LiveBytes(const Process& p) {
  // A node of the live map (LiveMap) is ~3/4 full on average.
  return p.live.size() * (sizeof(uint64_t) + sizeof(LiveRegion)) * 4 / 3;
}

uint64_t TraceIndex::BoundedBytes() const {
  uint64_t n = CallAndVersionBytes() + stacks_.CountedBytes() + UnthinnedBytes();
  for (const Process& p : processes_) n += p.advice.capacity() * sizeof(Advice);
  return n;
}

uint64_t TraceIndex::UnthinnedBytes() const {
  uint64_t n = strings_.bytes() + processes_.capacity() * sizeof(Process);
  for (const Process& p : processes_) n += LiveBytes(p);
  return n;
}

std::vector<uint32_t> TraceIndex::ProcessesWithPid(uint32_t pid) const {
  auto it = pid_to_processes_.find(pid);
  return it == pid_to_processes_.end() ? std::vector<uint32_t>{} : it->second;
}

std::vector<uint32_t> TraceIndex::Pids() const {
  std::vector<uint32_t> out;
  for (const Process& p : processes_) out.push_back(p.pid);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

VersionId TraceIndex::Lookup(uint32_t p, uint64_t addr, uint64_t t) const {
  if (p >= processes_.size()) return VersionId::Invalid();
  if (t == kEndOfTrace) {
    // The common case, O(log n) on the final state.
    const auto& live = processes_[p].live;
    auto it = live.upper_bound(addr);
    if (it == live.begin()) return VersionId::Invalid();
    --it;
    return addr < it->second.end ? it->second.version : VersionId::Invalid();
  }
  VersionId found;
  const std::vector<IntervalIndex>& by_process = intervals();
  if (p < by_process.size()) {
    by_process[p].Stab(addr, [&](uint32_t v) {
      if (versions_[v].AliveAt(t)) found = VersionId(v);
    });
  }
  return found;
}

std::vector<VersionId> TraceIndex::RegionsAt(uint32_t p, uint64_t t) const {
  std::vector<VersionId> out;
  if (p >= processes_.size()) return out;
  if (t == kEndOfTrace) {
    for (const auto& [start, region] : processes_[p].live) out.push_back(region.version);
    return out;
  }
  const std::vector<IntervalIndex>& by_process = intervals();
  if (p < by_process.size()) {
    for (const auto& iv : by_process[p].sorted()) {
      if (versions_[iv.payload].AliveAt(t)) out.push_back(VersionId(iv.payload));
    }
  }
  return out;
}

std::vector<VersionId> TraceIndex::History(uint32_t p, uint64_t addr) const {
  std::vector<VersionId> out;
  const std::vector<IntervalIndex>& by_process = intervals();
  if (p >= by_process.size()) return out;
  by_process[p].Stab(addr, [&](uint32_t v) { out.push_back(VersionId(v)); });
  std::sort(out.begin(), out.end(), [&](VersionId a, VersionId b) {
    const Version& va = versions_[a.value()];
    const Version& vb = versions_[b.value()];
    return va.t_from != vb.t_from ? va.t_from < vb.t_from : a < b;
  });
  return out;
}

}  // namespace pageblame::index

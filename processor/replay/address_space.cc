#include "processor/replay/address_space.h"

#include <algorithm>

namespace pageblame::replay {

using index::Begin;
using index::End;
using index::kLive;
using index::RegionAttrs;
using index::Version;

namespace {
// A file mapping's offset moves with its start; anonymous ones have none.
RegionAttrs ShiftAttrs(RegionAttrs attrs, uint64_t delta) {
  if (attrs.pgoff != 0 || attrs.path.valid()) attrs.pgoff += delta;
  return attrs;
}

// The live entry containing a, or else the first one after a.
template <typename Live>
auto FirstFrom(Live& live, uint64_t a) -> decltype(live.begin()) {
  auto it = live.upper_bound(a);
  if (it != live.begin()) {
    auto prev = std::prev(it);
    if (prev->second.end > a) return prev;
  }
  return it;
}
}  // namespace

index::LiveRegion AddressSpace::Add(Version v) {
  v.process = process_;
  return index::LiveRegion{v.end, idx_->AddVersion(v), v.t_from};
}

AddressSpace::Live::iterator AddressSpace::Insert(const Version& v, Live::iterator hint) {
  return idx_->mutable_process(process_).live.emplace_hint(hint, v.start, Add(v));
}

AddressSpace::Live::iterator AddressSpace::Insert(const Version& v) {
  return idx_->mutable_process(process_).live.emplace(v.start, Add(v)).first;
}

AddressSpace::Pieces AddressSpace::Peek(uint64_t a, uint64_t b) const {
  Pieces out;
  if (a >= b) return out;
  const Live& live = idx_->process(process_).live;
  for (auto it = FirstFrom(live, a); it != live.end() && it->first < b; ++it) {
    out.push_back(Piece{std::max(it->first, a), std::min(it->second.end, b), it->second.version,
                        it->second.t_from});
  }
  return out;
}

AddressSpace::Pieces AddressSpace::Remove(uint64_t a, uint64_t b, uint64_t t, End why,
                                          EventId ev) {
  Pieces removed;
  RemoveWalk(a, b, t, why, [ev] { return ev; }, [](const Piece&) { return false; }, &removed);
  return removed;
}

bool AddressSpace::Unmap(uint64_t a, uint64_t b, uint64_t t, absl::FunctionRef<EventId()> record,
                         absl::FunctionRef<bool(const Piece&)> keep) {
  bool any = false;
  RemoveWalk(
      a, b, t, End::kUnmapped,
      [&] {
        any = true;
        return record();
      },
      keep, /*removed=*/nullptr);
  return any;
}

AddressSpace::Live::iterator AddressSpace::RemoveWalk(uint64_t a, uint64_t b, uint64_t t,
                                                      End why, absl::FunctionRef<EventId()> event,
                                                      absl::FunctionRef<bool(const Piece&)> keep,
                                                      Pieces* removed) {
  Live& live = idx_->mutable_process(process_).live;
  auto it = FirstFrom(live, a);
  if (a >= b) return it;
  EventId ev;
  bool have_ev = false;
  while (it != live.end() && it->first < b) {
    const Piece p{std::max(it->first, a), std::min(it->second.end, b), it->second.version,
                  it->second.t_from};
    if (!have_ev) {
      ev = event();  // may add a call to the index: no live entry moves
      have_ev = true;
    }
    if (keep(p)) {
      ++it;
      continue;
    }
    // Only written here, and read only for a part that stays (rest): most
    // pieces are whole versions, and a version is usually far back in the
    // table, so a read would wait for memory where the writes need not.
    // (The table never moves what it holds: `ended` survives AddVersion.)
    Version& ended = idx_->mutable_version(p.from);
    ended.t_to = t;
    ended.end_kind = why;
    ended.end_event = ev;
    // The parts of the old version outside [a, b) go on as new versions.
    auto rest = [&](uint64_t s, uint64_t e) {
      Version v = ended;
      v.start = s;
      v.end = e;
      v.attrs = ShiftAttrs(ended.attrs, s - ended.start);
      v.t_from = t;
      v.t_to = kLive;
      v.begin = Begin::kSplit;
      v.begin_event = ev;
      v.end_kind = End::kLive;
      v.end_event = EventId::Invalid();
      v.prev = p.from;
      v.prev_addr = s;
      return v;
    };
    const uint64_t old_start = it->first, old_end = it->second.end;
    if (old_start < a) {
      // The part before a keeps the entry's key: the entry is rewritten in
      // place (a tail cut off by munmap or mremap), no erase and insert.
      it->second = Add(rest(old_start, a));
      ++it;
    } else {
      // Erasing or inserting invalidates every iterator but the one
      // returned, so `it` is always the position just after what is done.
      it = live.erase(it);
    }
    if (old_end > b) it = Insert(rest(b, old_end), it);  // the last piece: nothing of [a, b) after it
    if (removed != nullptr) removed->push_back(p);
  }
  return it;
}

Version AddressSpace::NewVersion(uint64_t a, uint64_t b, uint64_t t, EventId ev,
                                 const RegionAttrs& attrs) {
  Version v;
  v.start = a;
  v.end = b;
  v.t_from = t;
  v.begin = Begin::kCreated;
  v.origin = ev;
  v.begin_event = ev;
  v.attrs = attrs;
  return v;
}

VersionId AddressSpace::Create(uint64_t a, uint64_t b, uint64_t t, EventId ev,
                               const RegionAttrs& attrs) {
  return Insert(NewVersion(a, b, t, ev, attrs))->second.version;
}

VersionId AddressSpace::Map(uint64_t a, uint64_t b, uint64_t t, EventId ev,
                            const RegionAttrs& attrs) {
  Live::iterator after = RemoveWalk(
      a, b, t, End::kReplaced, [ev] { return ev; }, [](const Piece&) { return false; },
      /*removed=*/nullptr);
  // Nothing is left in [a, b): `after` is the first entry past it.
  return Insert(NewVersion(a, b, t, ev, attrs), after)->second.version;
}

void AddressSpace::AddBeforeTrace(uint64_t a, uint64_t b, uint64_t t, const RegionAttrs& attrs) {
  uint64_t cursor = a;
  auto add_gap = [&](uint64_t s, uint64_t e) {
    if (s >= e) return;
    Version v;
    v.start = s;
    v.end = e;
    v.t_from = t;
    v.begin = Begin::kBeforeTrace;
    v.attrs = ShiftAttrs(attrs, s - a);
    Insert(v);
  };
  for (const Piece& p : Peek(a, b)) {
    add_gap(cursor, p.start);
    cursor = p.end;
  }
  add_gap(cursor, b);
}

RegionAttrs AddressSpace::Move(uint64_t src, uint64_t len, uint64_t dst, uint64_t t, EventId ev,
                               bool keep_source) {
  Pieces pieces =
      keep_source ? Peek(src, src + len) : Remove(src, src + len, t, End::kMovedOut, ev);
  RegionAttrs last;
  uint64_t cursor = src;
  auto moved = [&](uint64_t s, uint64_t e, VersionId from, const RegionAttrs& attrs,
                   EventId origin) {
    Version v;
    v.start = s - src + dst;
    v.end = e - src + dst;
    v.t_from = t;
    v.begin = Begin::kMovedIn;
    v.begin_event = ev;
    v.origin = origin;
    v.prev = from;
    v.prev_addr = s;
    v.attrs = attrs;
    Insert(v);
  };
  for (const Piece& p : pieces) {
    // A gap in the source: the syscall succeeded, so those pages were mapped
    // before anything the trace shows.
    if (cursor < p.start) moved(cursor, p.start, VersionId::Invalid(), last, EventId::Invalid());
    const Version& from = idx_->version(p.from);
    RegionAttrs attrs = ShiftAttrs(from.attrs, p.start - from.start);
    EventId origin = from.origin;
    moved(p.start, p.end, p.from, attrs, origin);
    last = attrs;
    cursor = p.end;
  }
  if (cursor < src + len) moved(cursor, src + len, VersionId::Invalid(), last, EventId::Invalid());
  return last;
}

void AddressSpace::CopyFrom(uint32_t parent, uint64_t t) {
  std::vector<VersionId> ids;
  for (const auto& [start, region] : idx_->process(parent).live) ids.push_back(region.version);
  for (VersionId id : ids) {
    Version v = idx_->version(id);
    v.t_from = t;
    v.t_to = kLive;
    v.begin = Begin::kForked;
    v.begin_event = EventId::Invalid();
    v.end_kind = End::kLive;
    v.end_event = EventId::Invalid();
    v.prev = id;
    v.prev_addr = v.start;
    Insert(v);
  }
}

void AddressSpace::Clear(uint64_t t) {
  auto& live = idx_->mutable_process(process_).live;
  for (const auto& [start, region] : live) {
    Version& v = idx_->mutable_version(region.version);
    v.t_to = t;
    v.end_kind = End::kExec;
  }
  live.clear();
}

RegionAttrs AddressSpace::AttrsAt(uint64_t addr) const {
  Pieces p = Peek(addr, addr + 1);
  if (p.empty()) return RegionAttrs();
  const Version& v = idx_->version(p[0].from);
  return ShiftAttrs(v.attrs, addr - v.start);
}

}  // namespace pageblame::replay

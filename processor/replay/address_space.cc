#include "processor/replay/address_space.h"

#include <sys/mman.h>

#include <algorithm>

namespace pageblame::replay {

using index::Begin;
using index::End;
using index::kEndOfTrace;
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
  idx_->mutable_process(process_).mapped.Change(v.t_from, static_cast<int64_t>(v.end - v.start));
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
  RemoveWalk(a, b, t, [ev] { return ev; }, [why](const Piece&) { return why; }, &removed);
  return removed;
}

bool AddressSpace::Unmap(uint64_t a, uint64_t b, uint64_t t, absl::FunctionRef<EventId()> record,
                         absl::FunctionRef<bool(const Piece&)> keep) {
  bool any = false;
  RemoveWalk(
      a, b, t,
      [&] {
        any = true;
        return record();
      },
      [&](const Piece& p) { return keep(p) ? End::kNotEnded : End::kUnmapped; }, /*removed=*/nullptr);
  return any;
}

AddressSpace::Live::iterator AddressSpace::RemoveWalk(uint64_t a, uint64_t b, uint64_t t,
                                                      absl::FunctionRef<EventId()> event,
                                                      absl::FunctionRef<End(const Piece&)> fate,
                                                      Pieces* removed) {
  Live& live = idx_->mutable_process(process_).live;
  auto it = FirstFrom(live, a);
  if (a >= b) return it;
  EventId ev;
  bool have_ev = false;
  while (it != live.end() && it->first < b) {
    Piece p{std::max(it->first, a), std::min(it->second.end, b), it->second.version,
            it->second.t_from};
    if (!have_ev) {
      ev = event();  // may add a call to the index: no live entry moves
      have_ev = true;
    }
    const End why = fate(p);
    if (why == End::kNotEnded) {
      ++it;
      continue;
    }
    p.ended = why;
    // Only written here, and read only for a part that stays (rest): most
    // pieces are whole versions, and a version is usually far back in the
    // table, so a read would wait for memory where the writes need not.
    // (The table never moves what it holds: `ended` survives AddVersion.)
    Version& ended = idx_->mutable_version(p.from);
    ended.t_to = t;
    idx_->mutable_process(process_).mapped.Change(t, -static_cast<int64_t>(it->second.end - it->first));
    ended.end_kind = why;
    ended.end_event = ev;
    // The parts of the old version outside [a, b) go on as new versions.
    auto rest = [&](uint64_t s, uint64_t e) {
      Version v = ended;
      v.start = s;
      v.end = e;
      v.attrs = ShiftAttrs(ended.attrs, s - ended.start);
      v.t_from = t;
      v.t_to = kEndOfTrace;
      v.begin = Begin::kSplit;
      v.begin_event = ev;
      v.end_kind = End::kNotEnded;
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
      a, b, t, [ev] { return ev; }, [](const Piece&) { return End::kReplaced; },
      /*removed=*/nullptr);
  // Nothing is left in [a, b): `after` is the first entry past it.
  return Insert(NewVersion(a, b, t, ev, attrs), after)->second.version;
}

void AddressSpace::ForGaps(uint64_t a, uint64_t b, const Pieces& kept,
                           absl::FunctionRef<void(uint64_t, uint64_t)> add) {
  uint64_t cursor = a;
  for (const Piece& p : kept) {
    if (cursor < p.start) add(cursor, p.start);
    cursor = std::max(cursor, p.end);
  }
  if (cursor < b) add(cursor, b);
}

void AddressSpace::AddBeforeTrace(uint64_t a, uint64_t b, uint64_t t, const RegionAttrs& attrs,
                                  bool replace_unseen) {
  if (replace_unseen) {
    RemoveWalk(
        a, b, t, [] { return EventId::Invalid(); },
        [&](const Piece& p) {
          const Version& v = idx_->version(p.from);
          // Made before the trace, or split by such a record: no call's.
          const bool unseen = (v.begin == Begin::kBeforeTrace || v.begin == Begin::kSplit) &&
                              !v.begin_event.valid() && !v.origin.valid();
          return unseen ? End::kReplaced : End::kNotEnded;
        },
        /*removed=*/nullptr);
  }
  ForGaps(a, b, Peek(a, b), [&](uint64_t s, uint64_t e) {
    Version v;
    v.start = s;
    v.end = e;
    v.t_from = t;
    v.begin = Begin::kBeforeTrace;
    v.attrs = ShiftAttrs(attrs, s - a);
    Insert(v);
  });
}

RegionAttrs AddressSpace::Move(uint64_t src, uint64_t len, uint64_t dst, uint64_t t, EventId ev,
                               bool keep_source) {
  Pieces pieces =
      keep_source ? Peek(src, src + len) : Remove(src, src + len, t, End::kMovedOut, ev);
  RegionAttrs last;  // of the last piece moved, from its start
  RegionAttrs after_last;  // what a page right after it would have
  uint64_t cursor = src;
  auto moved = [&](uint64_t s, uint64_t e, VersionId from, const RegionAttrs& attrs,
                   EventId origin, EventId commit) {
    Version v;
    v.start = s - src + dst;
    v.end = e - src + dst;
    v.t_from = t;
    v.begin = Begin::kMovedIn;
    v.begin_event = ev;
    v.origin = origin;
    v.commit = commit;
    v.prev = from;
    v.prev_addr = s;
    v.attrs = attrs;
    Insert(v);
  };
  for (const Piece& p : pieces) {
    // A gap in the source: the syscall succeeded, so those pages were mapped
    // before anything the trace shows.
    if (cursor < p.start) {
      moved(cursor, p.start, VersionId::Invalid(), last, EventId::Invalid(), EventId::Invalid());
    }
    const Version& from = idx_->version(p.from);
    RegionAttrs attrs = ShiftAttrs(from.attrs, p.start - from.start);
    moved(p.start, p.end, p.from, attrs, from.origin, from.commit);
    last = attrs;
    after_last = ShiftAttrs(from.attrs, p.end - from.start);
    cursor = p.end;
  }
  if (cursor < src + len) {
    moved(cursor, src + len, VersionId::Invalid(), last, EventId::Invalid(), EventId::Invalid());
  }
  return after_last;
}

void AddressSpace::CopyFrom(uint32_t parent, uint64_t t) {
  std::vector<VersionId> ids;
  for (const auto& [start, region] : idx_->process(parent).live) ids.push_back(region.version);
  for (VersionId id : ids) {
    Version v = idx_->version(id);
    v.t_from = t;
    v.t_to = kEndOfTrace;
    v.begin = Begin::kForked;
    v.begin_event = EventId::Invalid();
    v.end_kind = End::kNotEnded;
    v.end_event = EventId::Invalid();
    v.prev = id;
    v.prev_addr = v.start;
    Insert(v);
  }
}

void AddressSpace::Clear(uint64_t t) {
  index::Process& proc = idx_->mutable_process(process_);
  for (const auto& [start, region] : proc.live) {
    Version& v = idx_->mutable_version(region.version);
    v.t_to = t;
    v.end_kind = End::kExec;
    proc.mapped.Change(t, -static_cast<int64_t>(region.end - start));
  }
  proc.live.clear();
}

Version AddressSpace::Continuation(const Piece& p, uint64_t t, EventId ev, Begin begin,
                                  const RegionAttrs& attrs, EventId commit) const {
  const Version& from = idx_->version(p.from);
  Version v;
  v.start = p.start;
  v.end = p.end;
  v.t_from = t;
  v.begin = begin;
  v.begin_event = ev;
  v.origin = from.origin;
  v.commit = commit;
  v.prev = p.from;
  v.prev_addr = p.start;
  v.attrs = attrs;
  return v;
}

namespace {
constexpr uint32_t kProtMask = PROT_READ | PROT_WRITE | PROT_EXEC;

// How a prot change from `before` to `after` is named, and the commit it
// leaves: a commit is the call that made PROT_NONE pages accessible.
Begin ProtChange(uint32_t before, uint32_t after) {
  if (after == PROT_NONE) return Begin::kDecommitted;
  if (before == PROT_NONE) return Begin::kCommitted;
  return Begin::kProtected;
}
EventId CommitAfter(Begin change, EventId ev, EventId commit_before) {
  switch (change) {
    case Begin::kCommitted: return ev;
    case Begin::kDecommitted: return EventId::Invalid();
    default: return commit_before;
  }
}

// Anonymous memory a MAP_FIXED anonymous mapping can reserve or commit in
// place: no file behind it (a mapping from before the trace has no flags
// of a creating call, only its missing path says so).
bool IsAnonymous(const Version& v) {
  return !v.attrs.path.valid() && ((v.attrs.flags & MAP_ANONYMOUS) || !v.origin.valid());
}
}  // namespace

bool AddressSpace::Protect(uint64_t a, uint64_t b, uint64_t t, absl::FunctionRef<EventId()> record,
                           uint32_t prot, bool unseen_were_none) {
  prot &= kProtMask;
  auto same = [&](const Piece& p) { return (idx_->version(p.from).attrs.prot & kProtMask) == prot; };
  const Pieces before = Peek(a, b);
  uint64_t mapped = 0;
  bool change = false;
  for (const Piece& p : before) {
    mapped += p.end - p.start;
    change |= !same(p);
  }
  if (!change && mapped == b - a) return false;  // nothing to do: no call to record
  const EventId ev = record();
  Pieces changed;
  RemoveWalk(
      a, b, t, [ev] { return ev; },
      [&](const Piece& p) { return same(p) ? End::kNotEnded : End::kChanged; }, &changed);
  for (const Piece& p : changed) {
    const Version& from = idx_->version(p.from);
    RegionAttrs attrs = ShiftAttrs(from.attrs, p.start - from.start);
    const Begin kind = ProtChange(attrs.prot & kProtMask, prot);
    attrs.prot = prot;
    Insert(Continuation(p, t, ev, kind, attrs, CommitAfter(kind, ev, from.commit)));
  }
  // Pages the trace never saw made: mapped before it and not reported by
  // perf (attach mode; with -d only PROT_NONE ones), or an exec image part
  // whose ELF file was not found.
  ForGaps(a, b, before, [&](uint64_t s, uint64_t e) {
    Version v;
    v.start = s;
    v.end = e;
    v.t_from = t;
    v.begin = Begin::kBeforeTrace;
    v.begin_event = ev;
    v.commit = unseen_were_none && prot != PROT_NONE ? ev : EventId::Invalid();
    v.attrs.prot = prot;
    v.attrs.flags = MAP_PRIVATE | MAP_ANONYMOUS;
    Insert(v);
  });
  return true;
}

void AddressSpace::MapOverAnonymous(uint64_t a, uint64_t b, uint64_t t, EventId ev,
                                    const RegionAttrs& attrs) {
  const uint32_t prot = attrs.prot & kProtMask;
  Pieces ended;
  RemoveWalk(
      a, b, t, [ev] { return ev; },
      [&](const Piece& p) {
        const Version& v = idx_->version(p.from);
        const bool in_place =
            IsAnonymous(v) && (prot == PROT_NONE || (v.attrs.prot & kProtMask) == PROT_NONE);
        return in_place ? End::kChanged : End::kReplaced;
      },
      &ended);
  Pieces kept;
  for (const Piece& p : ended) {
    if (p.ended != End::kChanged) continue;
    const Version& from = idx_->version(p.from);
    const Begin change = prot == PROT_NONE ? Begin::kDecommitted : Begin::kCommitted;
    Insert(Continuation(p, t, ev, change, attrs, CommitAfter(change, ev, from.commit)));
    kept.push_back(p);
  }
  ForGaps(a, b, kept, [&](uint64_t s, uint64_t e) { Insert(NewVersion(s, e, t, ev, attrs)); });
}

uint64_t AddressSpace::MappedPrefixEnd(uint64_t a, uint64_t b) const {
  uint64_t end = a;
  for (const Piece& p : Peek(a, b)) {
    if (p.start != end) break;
    end = p.end;
  }
  return end;
}

RegionAttrs AddressSpace::AttrsAt(uint64_t addr) const {
  Pieces p = Peek(addr, addr + 1);
  if (p.empty()) return RegionAttrs();
  const Version& v = idx_->version(p[0].from);
  return ShiftAttrs(v.attrs, addr - v.start);
}

}  // namespace pageblame::replay

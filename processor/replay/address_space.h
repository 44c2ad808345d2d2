// Changes to one process's address space, recorded as versions in the index.
// This is the state machine of the replay rules (design brief): every
// operation ends the versions it touches at time t and starts new ones, so
// the index keeps every past state.
//
//   AddressSpace as(&index, process);
//   as.Remove(a, b, t, End::kUnmapped, ev);          // munmap: splits partial overlaps
//   as.Map(a, b, t, ev, attrs);                      // mmap: replaces what was there
//   as.Move(old, len, dst, t, ev, /*keep_source=*/false);  // mremap move
//   as.Protect(a, b, t, record, PROT_READ | PROT_WRITE);   // mprotect: commits a reservation
//
// All ranges are half-open and page-aligned by the caller. O(log n + k) per
// operation for k touched versions: one descent of the live map finds the
// first piece, the rest is a walk, and the parts kept or created next to it
// go in at that position (a hinted insert, no second descent). Replay makes
// a million of these calls on a big trace; descents were a third of its time.
#ifndef PAGEBLAME_REPLAY_ADDRESS_SPACE_H_
#define PAGEBLAME_REPLAY_ADDRESS_SPACE_H_

#include <cstdint>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "processor/index/trace_index.h"

namespace pageblame::replay {

class AddressSpace {
 public:
  // A part of a version that an operation took: [start, end) of `from`.
  struct Piece {
    uint64_t start;
    uint64_t end;
    VersionId from;
    uint64_t t_from;  // of `from`
    index::End ended = index::End::kNotEnded;  // how the walk that took it ended it
  };
  // Most operations touch one to a few versions: no allocation for those.
  using Pieces = absl::InlinedVector<Piece, 4>;

  AddressSpace(index::TraceIndex* idx, uint32_t process) : idx_(idx), process_(process) {}

  // Ends every version overlapping [a, b) at t (`why`, by `ev`); the parts
  // outside [a, b) continue as new kSplit versions. Returns the removed parts
  // in address order.
  Pieces Remove(uint64_t a, uint64_t b, uint64_t t, index::End why, EventId ev);
  // munmap: Remove as kUnmapped, except the pieces `keep` says yes to, which
  // stay. The ending call is made by `record` when the walk meets the first
  // mapped piece (kept or not); if [a, b) holds nothing, nothing is recorded
  // and it returns false.
  bool Unmap(uint64_t a, uint64_t b, uint64_t t, absl::FunctionRef<EventId()> record,
             absl::FunctionRef<bool(const Piece&)> keep);
  // The parts of [a, b) that are mapped, without changing anything.
  Pieces Peek(uint64_t a, uint64_t b) const;
  // New pages [a, b) created by `ev` (origin = ev). The range must be free.
  VersionId Create(uint64_t a, uint64_t b, uint64_t t, EventId ev, const index::RegionAttrs& attrs);
  // Create over whatever was there (ended as kReplaced, as MAP_FIXED does).
  VersionId Map(uint64_t a, uint64_t b, uint64_t t, EventId ev, const index::RegionAttrs& attrs);
  // Pages [a, b) that existed before the trace. Where something is known
  // already it is left alone, except, with `replace_unseen`, pages that are
  // themselves from before the trace with nothing the trace did to them:
  // a mapping record outside any call (the kernel's ELF loader maps a whole
  // image, then each segment over it; perf reports each) is newer news of
  // those, an ELF image read from the file (replace_unseen false) a guess.
  void AddBeforeTrace(uint64_t a, uint64_t b, uint64_t t, const index::RegionAttrs& attrs,
                      bool replace_unseen = false);
  // mremap: moves the mapped pages of [src, src+len) to dst (the target must be
  // free). Moved pages keep origin and attrs; unknown pages in the source
  // (mapped before the trace, as the successful syscall proves) arrive as
  // before-trace pages. With keep_source (MREMAP_DONTUNMAP) the source stays.
  // Returns the attrs of a page right after the last mapped source piece,
  // as the kernel grows a VMA (a file mapping's offset goes on): those of a
  // grown tail.
  index::RegionAttrs Move(uint64_t src, uint64_t len, uint64_t dst, uint64_t t, EventId ev,
                          bool keep_source);
  // Copies every live version of `parent` into this (empty) space at fork time t.
  void CopyFrom(uint32_t parent, uint64_t t);
  // exec: ends every live version.
  void Clear(uint64_t t);
  // Attrs of the version containing addr (default attrs if none).
  index::RegionAttrs AttrsAt(uint64_t addr) const;

  // mprotect: sets the prot of the mapped pages of [a, b) to `prot` at t,
  // by the call `record` adds to the index (only if anything changes). Pages whose prot changes end (kChanged) and go on as a new version
  // with the same origin: kCommitted (commit = ev) if they were PROT_NONE,
  // kDecommitted (commit cleared) if `prot` is PROT_NONE, else kProtected.
  // Pages that already have `prot` are left alone (the kernel does not split
  // a VMA for them either). Unmapped parts of [a, b) are added as pages from
  // before the trace (the call succeeded, so the kernel had them); if
  // `unseen_were_none` (they would have been seen otherwise) they were
  // PROT_NONE, so ev commits them unless `prot` is PROT_NONE too. Returns
  // whether anything changed.
  bool Protect(uint64_t a, uint64_t b, uint64_t t, absl::FunctionRef<EventId()> record,
               uint32_t prot, bool unseen_were_none);
  // A MAP_FIXED anonymous mapping [a, b) made by `ev`: anonymous pages there
  // that it reserves or commits (it or they are PROT_NONE) keep their origin
  // and continue as kCommitted / kDecommitted versions with `attrs`; other
  // pages are replaced, and the rest of [a, b) is created by ev.
  void MapOverAnonymous(uint64_t a, uint64_t b, uint64_t t, EventId ev,
                        const index::RegionAttrs& attrs);
  // The end of the run of mapped pages that starts at a, up to b (a if a is
  // not mapped).
  uint64_t MappedPrefixEnd(uint64_t a, uint64_t b) const;

 private:
  using Live = decltype(index::Process::live);
  // The walk of every change: `event` is asked for the ending call once, at
  // the first mapped piece; `fate` says how each piece ends (End::kNotEnded: it
  // stays as it is); the parts of an ended version outside [a, b) go on as
  // kSplit versions. The ended parts go to `removed` (with their fate) if it
  // is not null. Returns the first live entry at or after b: with nothing
  // kept, where a new entry at `a` goes (an insert hint).
  Live::iterator RemoveWalk(uint64_t a, uint64_t b, uint64_t t, absl::FunctionRef<EventId()> event,
                            absl::FunctionRef<index::End(const Piece&)> fate, Pieces* removed);
  // A version that continues `p` (its part [p.start, p.end) of p.from) from
  // t on, begun by `ev` as `begin`, with `attrs` (origin kept, commit as given).
  index::Version Continuation(const Piece& p, uint64_t t, EventId ev, index::Begin begin,
                              const index::RegionAttrs& attrs, EventId commit) const;
  // Adds [a, b) minus the pieces `kept` (in address order) by `add`.
  static void ForGaps(uint64_t a, uint64_t b, const Pieces& kept,
                      absl::FunctionRef<void(uint64_t, uint64_t)> add);
  // Adds v to the index as this process's version; returns its live-map
  // entry (for a new key, or to rewrite an entry in place).
  index::LiveRegion Add(index::Version v);
  // Add, and the entry into the live map, at `hint` (a position at or just
  // after v.start) if given; returns it.
  Live::iterator Insert(const index::Version& v, Live::iterator hint);
  Live::iterator Insert(const index::Version& v);
  static index::Version NewVersion(uint64_t a, uint64_t b, uint64_t t, EventId ev,
                                   const index::RegionAttrs& attrs);
  index::TraceIndex* idx_;
  uint32_t process_;
};

}  // namespace pageblame::replay

#endif  // PAGEBLAME_REPLAY_ADDRESS_SPACE_H_

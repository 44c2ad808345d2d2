// The records of the address-timeline index.
//
// A Version is one piece of one region with fixed attributes over a time
// span: [start, end) x [t_from, t_to). Every change to an address space ends
// the versions it touches and starts new ones, so the versions of a process
// that are alive at time T are exactly its address space at T, and the
// versions that ever covered an address are that page's history. Each version
// keeps the CallEvent that created its pages (`origin`), which survives
// splits, moves (mremap) and fork copies.
#ifndef PAGEBLAME_INDEX_TIMELINE_TYPES_H_
#define PAGEBLAME_INDEX_TIMELINE_TYPES_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "processor/base/format.h"
#include "processor/base/typed_id.h"
#include "processor/decode/syscall_event.h"  // decode::Syscall, the kind of a CallEvent (pb_decode)
#include "processor/index/mapped_tally.h"
#include "processor/index/string_table.h"

namespace pageblame::index {

// A time meaning "the end of the trace": an open-ended t_to, or "now" as a
// moment to ask at. (A version that has not ended says so with End::kNotEnded.)
inline constexpr uint64_t kEndOfTrace = kEndOfTime;

// One memory syscall that changed an address space (failed calls and calls
// that changed nothing are counted in stats, not stored).
struct CallEvent {
  uint64_t time = 0;  // ns, perf clock (of the exit: when the change took effect)
  // The first and last sample of this call on its thread: enter and exit,
  // and their raw_syscalls duplicates when the trace has both kinds.
  uint64_t first_time = 0;
  uint64_t last_time = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  decode::Syscall syscall = decode::Syscall::kMmap;
  uint64_t args[6] = {0, 0, 0, 0, 0, 0};
  int64_t ret = 0;
  StackId stack;
  StringId comm;
};

// How a version began.
enum class Begin : uint8_t {
  kCreated,     // its pages were created by `begin_event` (== origin)
  kBeforeTrace, // existed before the trace (attach mode, or mapped by the kernel at exec)
  kSplit,       // a neighbouring part of its region was removed by `begin_event`
  kMovedIn,     // mremap `begin_event` moved these pages here from `prev`
  kForked,      // copied from the parent's `prev` when the process forked
  // The pages of `prev` at this address, changed in place by `begin_event`
  // (mprotect, pkey_mprotect, or a MAP_FIXED anonymous mmap over anonymous
  // memory that reserves or commits it); `origin` is kept:
  kCommitted,   // made accessible after being PROT_NONE (commit = begin_event)
  kDecommitted, // made PROT_NONE, or remapped PROT_NONE by MAP_FIXED (commit cleared)
  kProtected,   // another prot change (r-- to rw-, ...): commit kept
};

// How a version ended.
enum class End : uint8_t {
  kNotEnded,   // it has not: part of the final state (t_to == kEndOfTrace)
  kUnmapped,   // munmap, brk shrink, mremap shrink removed its pages (or part of them)
  kReplaced,   // a MAP_FIXED mmap or an mremap target took its place
  kMovedOut,   // mremap moved its pages elsewhere
  kExec,       // the process exec'd: a new, empty address space
  kChanged,    // `end_event` changed its prot in place: the next version continues it
};

// Attributes that later events (mprotect, madvise) may change by ending a
// version and starting a new one with the same origin.
struct RegionAttrs {
  uint32_t prot = 0;   // PROT_*
  uint32_t flags = 0;  // MAP_* of the creating call
  uint64_t pgoff = 0;  // file offset of `start`, for file mappings
  StringId path;       // file path or "[heap]", invalid if unknown / anonymous
  // False for a mapping from before the trace that perf reported without
  // its prot (a PERF_RECORD_MMAP, not MMAP2): `prot` is then a guess (r-x).
  bool prot_known = true;
};

// Ordered for size (88 bytes, where field order gave 96: a replay keeps
// about half a version per call): the 64-bit fields, then `attrs`, whose
// 3 bytes of tail padding hold `begin` and `end_kind` ([[no_unique_address]]:
// a standard C++20 attribute that GCC and Clang honour in C++17 too; a
// RegionAttrs assigned to `attrs` writes its 21 bytes, never the padding),
// then the 32-bit ids.
struct Version {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t t_from = 0;
  uint64_t t_to = kEndOfTrace;
  uint64_t prev_addr = 0;  // where `start` was in `prev` (differs from start after a move)
  [[no_unique_address]] RegionAttrs attrs;
  Begin begin = Begin::kCreated;
  End end_kind = End::kNotEnded;
  uint32_t process = 0;  // index into TraceIndex::processes()
  EventId origin;       // creating call; invalid = existed before the trace
  // The call that last made these pages accessible after they were PROT_NONE
  // (reserved, or decommitted): an mprotect, or a MAP_FIXED anonymous mmap over a
  // reservation. Invalid when they have been accessible since `origin`
  // made them, or are PROT_NONE now.
  EventId commit;
  EventId begin_event;  // call that started this version (invalid for fork/before-trace)
  EventId end_event;    // call that ended it (invalid while live or for exec)
  VersionId prev;       // version it continues (split, move, fork), if any

  bool AliveAt(uint64_t t) const { return t_from <= t && t < t_to; }
};

static_assert(sizeof(Version) == 88, "a version in memory: see bench/HISTORY.md before growing it");

// An entry of Process::live: where the region ends, its live version and
// that version's t_from. The copy of t_from lets munmap's check for pages
// placed during the call (Replayer::PlacedInFreeRangeSince) answer from the
// live map, without reading the version (made long before, in a table of
// tens of MB: a cache miss on nearly every call).
struct LiveRegion {
  uint64_t end = 0;
  VersionId version;
  uint64_t t_from = 0;
};

// Process::live: a B-tree keyed by region start. (Its node size is absl's
// fixed 256 bytes; 1 KiB nodes measured 7 % less replay CPU, but only
// through absl's internal namespace: bench/HISTORY.md.)
using LiveMap = absl::btree_map<uint64_t, LiveRegion>;

// A successful madvise over [start, end) of a process: it changes no prot and
// no version, so it is kept beside the versions, for pages' histories.
struct Advice {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t time = 0;
  EventId event;
};

// One process (one address space). A pid reused after exit, or a process
// that exec'd, keeps its entry: exec ends all versions at the exec time.
struct Process {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  uint64_t t_start = 0;           // fork time, or first record seen
  uint64_t t_exit = kEndOfTrace;        // exit time (its end state is the state before exit)
  bool existed_before_trace = false;  // attach mode: first seen without a fork in the trace
  bool saw_exec = false;
  uint64_t t_exec = 0;  // its last exec, if saw_exec
  // A 32-bit program: its syscalls are not replayed (the kernel fires no
  // syscalls:* tracepoints for them, and raw_syscalls carry i386 numbers).
  bool is_32bit = false;
  StringId comm;
  // Attach mode without `perf record -d`: the first brk of the trace moved the
  // break from an unknown value (so its heap pages cannot be attributed).
  EventId unknown_break_event;
  // start -> the live version there, non-overlapping. The end rides along so
  // that range lookups during replay need not touch the version table.
  LiveMap live;
  // Its madvise calls, in time order.
  std::vector<Advice> advice;
  // Its mapped bytes now and at their peak since its last exec, kept by
  // replay (AddressSpace) as it adds and ends versions.
  MappedTally mapped;
};

}  // namespace pageblame::index

#endif  // PAGEBLAME_INDEX_TIMELINE_TYPES_H_

// munmap: removes [addr, addr + len) from any regions, splitting them;
// unmapping nothing is fine. The kernel applies it somewhere between the
// enter and the exit record, which matters when another thread maps in that
// window (see PlacedInFreeRangeSince).
#include <sys/mman.h>

#include "processor/replay/call_rules.h"

namespace pageblame::replay {
namespace {

// True if the version of `piece` was made after time `since` by another
// thread than `tid`, in a way the kernel only allows on a free range: it was
// placed after the unmap and is not the unmap's to remove.
bool PlacedInFreeRangeSince(const index::TraceIndex& idx, const AddressSpace::Piece& piece,
                            uint64_t since, uint32_t tid) {
  // Nearly every piece is older than the call: answered without its version.
  if (piece.t_from <= since) return false;
  const index::Version& v = idx.version(piece.from);
  if (!v.begin_event.valid()) return false;
  if (v.begin != index::Begin::kCreated && v.begin != index::Begin::kMovedIn) return false;
  const index::CallEvent& by = idx.event(v.begin_event);
  if (by.tid == tid) return false;  // one thread's calls are in order
  // Only MAP_FIXED and MREMAP_FIXED replace what is there; every other way
  // of creating pages (kernel-chosen address, MAP_FIXED_NOREPLACE, brk,
  // mremap growing in place) fails unless the range is free.
  if (by.syscall == decode::Syscall::kMmap) return (by.args[3] & MAP_FIXED) == 0;
  if (by.syscall == decode::Syscall::kMremap) return (by.args[3] & MREMAP_FIXED) == 0;
  return true;
}

}  // namespace

void ApplyMunmap(CallContext& c) {
  if (c.ret != 0) {
    ++c.stats().calls_failed;
    return;
  }
  const uint64_t start = c.args()[0];
  const uint64_t end = start + PageUp(c.args()[1]);
  const uint64_t entered = c.call.enter.time;
  const bool changed =
      c.as.Unmap(start, end, c.time, c.record, [&](const AddressSpace::Piece& piece) {
        if (!PlacedInFreeRangeSince(c.idx, piece, entered, c.tid)) return false;
        ++c.stats().unmaps_reordered;
        return true;
      });
  if (!changed) ++c.stats().calls_no_change;
}

}  // namespace pageblame::replay

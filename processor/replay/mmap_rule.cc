// mmap: creates [ret, ret + len) (len rounded up to the mapping's page size);
// whatever was there ends as replaced (MAP_FIXED), except anonymous memory
// that an anonymous MAP_FIXED mapping reserves or commits in place (the
// HotSpot pattern): those pages keep their origin.
#include <sys/mman.h>

#include "processor/replay/call_rules.h"

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif

namespace pageblame::replay {
namespace {

// mmap lengths round up to the mapping's page size: 4 KiB, or the huge page
// size encoded in the flags for MAP_HUGETLB (include/uapi/asm-generic/mman-common.h).
uint64_t MmapLength(uint64_t len, uint64_t flags) {
  if (flags & MAP_HUGETLB) {
    uint64_t shift = (flags >> MAP_HUGE_SHIFT) & 0x3f;
    uint64_t huge = shift ? (uint64_t{1} << shift) : (uint64_t{2} << 20);
    return (len + huge - 1) & ~(huge - 1);
  }
  return PageUp(len);
}

}  // namespace

void ApplyMmap(CallContext& c) {
  if (decode::IsErrorReturn(c.ret)) {
    ++c.stats().calls_failed;
    return;
  }
  const uint64_t* a = c.args();
  const uint64_t start = static_cast<uint64_t>(c.ret);
  const uint64_t end = start + MmapLength(a[1], a[3]);
  const EventId ev = c.record();
  index::RegionAttrs attrs;
  attrs.prot = static_cast<uint32_t>(a[2]);
  attrs.flags = static_cast<uint32_t>(a[3]);
  attrs.pgoff = (a[3] & MAP_ANONYMOUS) ? 0 : a[5];
  attrs.path = c.call.path;
  // Only MAP_FIXED lands on pages that exist; the anonymous kind may
  // reserve or commit them in place.
  if ((a[3] & MAP_FIXED) && (a[3] & MAP_ANONYMOUS) && !attrs.path.valid()) {
    c.as.MapOverAnonymous(start, end, c.time, ev, attrs);
    return;
  }
  c.as.Map(start, end, c.time, ev, attrs);
}

}  // namespace pageblame::replay

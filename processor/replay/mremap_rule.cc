// mremap: shrink in place drops the tail; grow in place creates the tail
// (origin: this mremap); a move carries the pages with their history
// (MREMAP_FIXED frees the target first; MREMAP_DONTUNMAP keeps the source).
#include <sys/mman.h>

#include <algorithm>

#include "processor/replay/call_rules.h"

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

namespace pageblame::replay {
namespace {

// The attrs of a page grown after `last`: a file mapping's offset goes on.
index::RegionAttrs Following(index::RegionAttrs last) {
  if (last.path.valid() || last.pgoff) last.pgoff += kPage;
  return last;
}

void InPlace(CallContext& c, uint64_t old_addr, uint64_t old_len, uint64_t new_len, EventId ev) {
  if (new_len < old_len) {
    c.as.Remove(old_addr + new_len, old_addr + old_len, c.time, index::End::kUnmapped, ev);
  } else if (new_len > old_len) {
    // The last page's attrs (AttrsAt gives those of the address asked: its
    // start, not its last byte, whose file offset is not a page's).
    index::RegionAttrs attrs = Following(c.as.AttrsAt(old_addr + old_len - kPage));
    c.as.Map(old_addr + old_len, old_addr + new_len, c.time, ev, attrs);
  }
}

void Moved(CallContext& c, uint64_t old_addr, uint64_t old_len, uint64_t new_len, uint64_t dst,
           EventId ev) {
  // The target is freed first (MREMAP_FIXED unmaps what was there).
  c.as.Remove(dst, dst + new_len, c.time, index::End::kReplaced, ev);
  const bool keep = (c.args()[3] & MREMAP_DONTUNMAP) != 0;
  const uint64_t moved = std::min(old_len, new_len);
  if (new_len < old_len && !keep) {
    c.as.Remove(old_addr + new_len, old_addr + old_len, c.time, index::End::kUnmapped, ev);
  }
  index::RegionAttrs after = c.as.Move(old_addr, moved, dst, c.time, ev, keep);
  if (new_len > old_len) c.as.Create(dst + old_len, dst + new_len, c.time, ev, after);
}

}  // namespace

void ApplyMremap(CallContext& c) {
  if (decode::IsErrorReturn(c.ret)) {
    ++c.stats().calls_failed;
    return;
  }
  const uint64_t old_addr = c.args()[0];
  const uint64_t old_len = PageUp(c.args()[1]);
  const uint64_t new_len = PageUp(c.args()[2]);
  const uint64_t dst = static_cast<uint64_t>(c.ret);
  const EventId ev = c.record();
  if (old_len == 0) {
    // mremap(old, 0, n, MAYMOVE) duplicates a shared mapping: new pages.
    index::RegionAttrs attrs = c.as.AttrsAt(old_addr);
    if (c.call.path.valid()) attrs.path = c.call.path;
    c.as.Map(dst, dst + new_len, c.time, ev, attrs);
    return;
  }
  if (dst == old_addr) {
    InPlace(c, old_addr, old_len, new_len, ev);
  } else {
    Moved(c, old_addr, old_len, new_len, dst, ev);
  }
}

}  // namespace pageblame::replay

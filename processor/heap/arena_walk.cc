#include "processor/heap/arena_walk.h"

#include <algorithm>

namespace pageblame::heap {

WalkedChunk* ArenaWalk::ChunkAt(uint64_t addr) {
  auto it = std::lower_bound(chunks.begin(), chunks.end(), addr,
                             [](const WalkedChunk& c, uint64_t a) { return c.addr < a; });
  return it != chunks.end() && it->addr == addr ? &*it : nullptr;
}

bool ArenaWalk::InHeaps(uint64_t addr, uint64_t n) const {
  for (const WalkedHeap& h : heaps) {
    if (addr >= h.start && addr < h.end && n <= h.end - addr) return true;
  }
  return false;
}

}  // namespace pageblame::heap

#include "processor/heap/arena_walk.h"

namespace pageblame::heap {

bool ArenaWalk::InHeaps(uint64_t addr, uint64_t n) const {
  for (const WalkedHeap& h : heaps) {
    if (addr >= h.start && addr < h.end && n <= h.end - addr) return true;
  }
  return false;
}

}  // namespace pageblame::heap

// ArenaWalk: what ArenaWalker found in one arena before the tcache and the
// trim model are applied: its heaps, where every chunk starts and the
// records of the chunks a free list may hold (ChunkMap), the binned and
// fastbin chunks, the top chunk, and what was wrong. Shared by the walker's
// stages (arena_walker.h, tcache_scanner.h, trim_model.h); heap_snapshot.h
// holds what is reported.
//
//   ArenaWalk& w = ...;
//   if (WalkedChunk* c = w.ChunkAt(addr)) { ... c->state() ... }
//   w.ForEachNoted([](const WalkedChunk& c) { ... });  // address order
#ifndef PAGEBLAME_HEAP_ARENA_WALK_H_
#define PAGEBLAME_HEAP_ARENA_WALK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "processor/heap/chunk_map.h"

namespace pageblame::heap {

// One heap of the arena: main_arena's brk area, or one heap_info segment.
struct WalkedHeap {
  uint64_t start = 0, end = 0;          // the whole segment (heap_info included)
  uint64_t chunks_start = 0;            // first chunk
  uint64_t chunks_end = 0;              // where its chunks end (top, or its fencepost)
  bool complete = false;                // every chunk from chunks_start to chunks_end walked
  bool walkable = true;                 // false: where its chunks lie is not known
};

struct ArenaWalk {
  uint64_t address = 0;
  bool main = false;
  uint64_t system_mem = 0, attached_threads = 0, flags = 0;
  uint64_t top = 0, top_size = 0;
  std::vector<WalkedHeap> heaps;        // in address order
  ChunkMap chunks;                      // all heaps' chunks, added in address order
  uint64_t binned_bytes = 0, binned_count = 0, binned_flag_bytes = 0;
  uint64_t fast_bytes = 0, fast_count = 0;
  uint64_t tcache_bytes = 0, tcache_count = 0;
  // Free-list members the chunk walk did not reach (it stopped at damage):
  // counted, and kept here for the free ranges. {addr, size, state}.
  std::vector<WalkedChunk> loose;
  std::string header;                   // the malloc_state bytes read (compared on re-read)
  std::string damage;                   // the first thing found wrong; "" if none

  // The chunk starting at `addr`, or nullptr.
  WalkedChunk* ChunkAt(uint64_t addr) { return chunks.Find(addr); }
  // Every chunk with a record (all those a list can have marked free), in
  // address order.
  template <typename F>
  void ForEachNoted(F f) const { chunks.ForEachNoted(f); }
  // True if [addr, addr + n) lies inside one of the heaps.
  bool InHeaps(uint64_t addr, uint64_t n) const;
  // Records the first damage only (later ones follow from it, mostly).
  void Damage(const std::string& what) {
    if (damage.empty()) damage = what;
  }
};

}  // namespace pageblame::heap

#endif  // PAGEBLAME_HEAP_ARENA_WALK_H_

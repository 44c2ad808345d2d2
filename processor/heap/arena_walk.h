// ArenaWalk: what ArenaWalker found in one arena before the tcache and the
// trim model are applied: its heaps, every chunk in address order with its
// state, the binned and fastbin chunks, the top chunk, and what was wrong.
// Shared by the walker's stages (arena_walker.h, tcache_scanner.h,
// trim_model.h); heap_snapshot.h holds what is reported.
//
//   const ArenaWalk& w = ...;
//   if (const WalkedChunk* c = w.ChunkAt(addr)) { ... c->state ... }
#ifndef PAGEBLAME_HEAP_ARENA_WALK_H_
#define PAGEBLAME_HEAP_ARENA_WALK_H_

#include <cstdint>
#include <string>
#include <vector>

namespace pageblame::heap {

// glibc malloc's chunk constants on x86-64 (malloc.c: SIZE_SZ 8,
// MALLOC_ALIGNMENT 16, MINSIZE 32, the three flag bits of a size field).
inline constexpr uint64_t kSizeSz = 8;
inline constexpr uint64_t kChunkHeader = 16;
inline constexpr uint64_t kMinSize = 32;
inline constexpr uint64_t kAlign = 16;
inline constexpr uint64_t kPrevInuse = 1, kIsMmapped = 2, kNonMainArena = 4, kSizeBits = 7;
// sizeof (struct malloc_chunk): prev_size, size, fd, bk, fd_nextsize, bk_nextsize.
inline constexpr uint64_t kMallocChunkSize = 48;

enum class ChunkState : uint8_t { kInUse, kBinned, kFast, kTcache, kFence };

struct WalkedChunk {
  uint64_t addr = 0;  // the chunk (its prev_size field), 16-aligned
  uint64_t size = 0;  // chunksize(): flags cleared
  ChunkState state = ChunkState::kInUse;
  uint8_t flags = 0;       // the flag bits of its size field
  bool free_bit = false;   // the next chunk's PREV_INUSE is clear: glibc takes it for free
  bool seen = false;       // already met on a free list (cycle detection)
  bool words = false;      // fd and key were read with the header
  // Its first two user words, read with its header (same page, same read):
  // a free chunk's fd and bk, a tcache entry's next and key. The free-list
  // walks use them instead of reading each member again at random.
  uint64_t fd = 0, key = 0;
};

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
  std::vector<WalkedChunk> chunks;      // all heaps' chunks, in address order
  uint64_t binned_bytes = 0, binned_count = 0, binned_flag_bytes = 0;
  uint64_t fast_bytes = 0, fast_count = 0;
  uint64_t tcache_bytes = 0, tcache_count = 0;
  // Free-list members the chunk walk did not reach (it stopped at damage):
  // counted, and kept here for the free ranges. {addr, size, state}.
  std::vector<WalkedChunk> loose;
  std::string header;                   // the malloc_state bytes read (compared on re-read)
  std::string damage;                   // the first thing found wrong; "" if none

  // The chunk starting at `addr`, or nullptr.
  WalkedChunk* ChunkAt(uint64_t addr);
  // True if [addr, addr + n) lies inside one of the heaps.
  bool InHeaps(uint64_t addr, uint64_t n) const;
  // Records the first damage only (later ones follow from it, mostly).
  void Damage(const std::string& what) {
    if (damage.empty()) damage = what;
  }
};

}  // namespace pageblame::heap

#endif  // PAGEBLAME_HEAP_ARENA_WALK_H_

// ArenaWalker: walks one glibc malloc arena in a target's memory: its
// struct malloc_state, its heaps (main_arena: the brk area from
// mp_.sbrk_base to the end of top; a thread arena: the heap_info list from
// the heap holding top back through `prev`), every chunk in address order,
// the unsorted, small and large bins, the fastbins and the top chunk.
//
//   ArenaWalker walker(&memory, layout, {.sbrk_base = sbrk, .heap_max = 64 << 20});
//   ArenaWalk w = walker.Walk(arena_address, /*main=*/true);
//   if (!w.damage.empty()) ... // "bin 3: a cycle after 12 chunks"
//
// Every value read is checked before it is used; what does not fit glibc's
// invariants (a size that is not a multiple of 16 or runs past its heap, a
// list pointer outside the arena's heaps or not at a chunk, a chunk met twice
// on the lists, a bin chunk glibc marks in use, a fastbin chunk of the wrong
// size) stops that walk and is named in ArenaWalk::damage; the rest of the
// arena is still counted. Work is bounded: the chunk walk advances at least
// 16 bytes a step inside a heap, and each list step must land on a chunk not
// met before (without a complete chunk walk, at most kMaxListSteps steps).
// The flags of chunk sizes follow malloc.c: PREV_INUSE of the next chunk
// says whether a chunk is in use (fastbin chunks keep it set).
//
// The chunk walk reads each heap front to back in large reads (heap_reader.h)
// and keeps one bit per chunk (chunk_map.h); a whole record only for the
// chunks a free list may hold: those glibc takes for free, the tcache
// structs' size, and in-use chunks of a fastbin or tcache size whose first
// word, revealed (safe-linking), is 0 or 16-aligned inside a mapping of the
// target, as a list's next pointer is. The lists then find their members'
// next pointers in the records, not by reading each member again at random.
// Which chunks get a record changes no answer, only how much is read later:
// a member without one (a damaged list) is read from the target.
#ifndef PAGEBLAME_HEAP_ARENA_WALKER_H_
#define PAGEBLAME_HEAP_ARENA_WALKER_H_

#include <cstdint>

#include "absl/container/flat_hash_set.h"
#include "processor/base/format.h"
#include "processor/heap/arena_walk.h"
#include "processor/heap/glibc_layout.h"
#include "processor/heap/target_memory.h"

namespace pageblame::heap {

class ArenaWalker {
 public:
  static constexpr uint64_t kMaxListSteps = uint64_t{1} << 24;
  static constexpr uint64_t kMaxHeaps = 1 << 16;

  struct Params {
    uint64_t sbrk_base = 0;                    // mp_.sbrk_base
    uint64_t heap_max = uint64_t{64} << 20;    // heap_max_size(): thread heaps are aligned to it
  };
  ArenaWalker(TargetMemory* memory, const GlibcLayout& layout, Params params);

  ArenaWalk Walk(uint64_t arena, bool main);

 private:
  bool ReadHeader(ArenaWalk* w);
  uint64_t HeaderWord(const ArenaWalk& w, uint64_t offset) const;
  void FindMainHeap(ArenaWalk* w);
  void FindThreadHeaps(ArenaWalk* w);
  void WalkChunks(ArenaWalk* w, WalkedHeap* h);
  // Whether an in-use chunk at `addr` whose first user word is `fd` may be
  // on a fastbin or tcache list (its record is then kept).
  bool MayBeListed(uint64_t addr, uint64_t size, uint64_t fd);
  void WalkBins(ArenaWalk* w);
  void WalkBin(ArenaWalk* w, uint32_t bin);
  void WalkFastbins(ArenaWalk* w);
  void WalkFastbin(ArenaWalk* w, uint32_t index, uint64_t first);
  // A free-list member at `addr`: checked to be a chunk of the arena not met
  // before; its size (flags included) in *raw_size. False (with damage) if not.
  bool Visit(ArenaWalk* w, uint64_t addr, const std::string& list, uint64_t step, uint64_t* raw_size,
             WalkedChunk** chunk);

  TargetMemory* memory_;
  const GlibcLayout& layout_;
  Params params_;
  uint64_t tcache_struct_chunk_ = 0;  // the chunk size of a tcache_perthread_struct (0: no tcache)
  uint64_t list_max_ = 0;             // the largest chunk a fastbin or tcache holds
  uint64_t last_mapping_start_ = 0, last_mapping_end_ = 0;  // the mapping MayBeListed last found
  bool chunks_complete_ = false;
  absl::flat_hash_set<uint64_t> visited_;  // list members, when the chunk walk is incomplete
};

// "0x7f3bad120000".
std::string Hex(uint64_t v);

// The chunk size of a tcache_perthread_struct: request2size(sizeof); 0 if
// this glibc has no tcache.
uint64_t TcacheStructChunkSize(const GlibcLayout& layout);

}  // namespace pageblame::heap

#endif  // PAGEBLAME_HEAP_ARENA_WALKER_H_

// TrimModel: what glibc's malloc_trim(0) would give back in one walked
// arena, exactly as glibc 2.26-2.40's mtrim() and systrim() do it
// (malloc.c):
//   1. malloc_consolidate(): every fastbin chunk is merged with the free
//      chunks beside it (and into top when it touches top); tcache chunks
//      stay in use and block merging.
//   2. For each chunk in the unsorted bin and in the bins from
//      bin_index(pagesize) on (the smaller bins cannot hold a whole page
//      past the chunk's header), the whole pages from
//      ALIGN_UP(chunk + sizeof (struct malloc_chunk), pagesize) to the
//      chunk's end are released with MADV_DONTNEED.
//   3. main_arena only: systrim(0) shrinks the brk by
//      ALIGN_DOWN(chunksize(top) - MINSIZE - 1, pagesize) (the THP page size
//      when mp_.thp_pagesize is set). A thread arena's top is not trimmed
//      (heap_trim runs only on free()), nor is a main_arena that is not one
//      brk area (NONCONTIGUOUS_BIT).
//
//   std::vector<residency::PageRange> r = TrimModel::Releasable(walk, 4096, 0);
//
// Needs the arena's complete chunk walk for step 1; the heaps whose walk
// stopped at damage give nothing.
#ifndef PAGEBLAME_HEAP_TRIM_MODEL_H_
#define PAGEBLAME_HEAP_TRIM_MODEL_H_

#include <cstdint>
#include <vector>

#include "processor/heap/arena_walk.h"
#include "processor/residency/residency_snapshot.h"

namespace pageblame::heap {

class TrimModel {
 public:
  // The page ranges malloc_trim(0) would release, sorted and disjoint.
  static std::vector<residency::PageRange> Releasable(const ArenaWalk& w, uint64_t page_size,
                                                      uint64_t thp_page_size);
  // The pages mtrim releases inside one free chunk [p, p + size).
  static residency::PageRange ChunkPages(uint64_t p, uint64_t size, uint64_t page_size);
};

}  // namespace pageblame::heap

#endif  // PAGEBLAME_HEAP_TRIM_MODEL_H_

// ArenaLocator: finds main_arena and mp_ in libc's writable data when no
// symbol gives their addresses (a stripped libc without its debug file), by
// what glibc's own code makes true of them (malloc.c):
//   main_arena: malloc_init_state() points both ends of every empty bin at
//     the bin itself (bin_at(i)), so most of its 127 bins are
//     self-referencing pairs at fixed offsets; its `next` list leads back to
//     it; its top lies in a writable mapping (or is still initial_top).
//   mp_: tcache_bins <= 64, tcache_max_bytes <= 1032 and tcache_bins =
//     csize2tidx(request2size(tcache_max_bytes)) + 1 (how both are set, by
//     default and by the tunables), n_mmaps <= n_mmaps_max, mmapped_mem a
//     multiple of the page size, at most max_mmapped_mem, mmap_threshold at
//     most HEAP_MAX_SIZE / 2 (mallopt refuses more), and sbrk_base the start
//     of the brk area main_arena's top lies in (0 before any sbrk).
// A candidate that is not the only one is refused: no guess.
//
//   ASSIGN_OR_RETURN(uint64_t arena, ArenaLocator::FindMainArena(memory, layout, libc_path));
//   ASSIGN_OR_RETURN(uint64_t mp, ArenaLocator::FindMallocPar(memory, layout, libc_path));
//
// The writable data scanned: libc's writable file mappings and the
// anonymous mapping right after them (its .bss), a few tens of KiB.
#ifndef PAGEBLAME_HEAP_ARENA_LOCATOR_H_
#define PAGEBLAME_HEAP_ARENA_LOCATOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "processor/heap/glibc_layout.h"
#include "processor/heap/target_memory.h"

namespace pageblame::heap {

class ArenaLocator {
 public:
  static absl::StatusOr<uint64_t> FindMainArena(TargetMemory* memory, const GlibcLayout& layout,
                                                const std::string& libc_path);
  static absl::StatusOr<uint64_t> FindMallocPar(TargetMemory* memory, const GlibcLayout& layout,
                                                const std::string& libc_path, uint64_t main_arena);
  // True if libc's writable data holds `value` as an aligned word (used to
  // confirm a tcache_key inferred from a tcache entry).
  static bool DataHolds(TargetMemory* memory, const std::string& libc_path, uint64_t value);

  // libc's writable data: [start, end) ranges with their bytes.
  struct Data {
    uint64_t start = 0;
    std::string bytes;
  };
  static std::vector<Data> ReadData(TargetMemory* memory, const std::string& libc_path);
};

}  // namespace pageblame::heap

#endif  // PAGEBLAME_HEAP_ARENA_LOCATOR_H_

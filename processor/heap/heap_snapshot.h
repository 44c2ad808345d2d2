// HeapSnapshot: what the glibc heap walker (heap_walker.h) found in one
// process at one moment: per arena, the bytes glibc got from the system, the
// bytes in live chunks and the bytes it holds free (bins, fastbins, tcache,
// top), how much of the free memory is resident, and what malloc_trim(0)
// would give back; the mmapped chunks; the free ranges themselves, so that
// free bytes can later be split per page and per stack. The definitions
// (docs/heap.md) follow glibc's own malloc.c:
//   free_bytes     = every free chunk (bins, fastbins, tcache) + the top chunk
//   in_use_bytes   = system_bytes - free_bytes   (as mallinfo2's uordblks, but
//                    tcache'd chunks count as free here)
//   releasable_bytes = what malloc_trim(0) of this glibc returns: the whole
//                    pages inside binned free chunks once fastbins are
//                    consolidated (mtrim), plus the main arena's top beyond
//                    MINSIZE (systrim); never tcache chunks, never a thread
//                    arena's top.
//
//   HeapSnapshot s = ...;
//   for (const ArenaStats& a : s.arenas) total_free += a.free_bytes;
//   HeapTotals t = s.Totals();
//
// Resident figures are optional: known for a live process (pagemap), unknown
// (nullopt, JSON null) for a core. Free ranges are sorted and disjoint.
#ifndef PAGEBLAME_HEAP_HEAP_SNAPSHOT_H_
#define PAGEBLAME_HEAP_HEAP_SNAPSHOT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pageblame::heap {

// Which allocator owns malloc in the target.
enum class Allocator : uint8_t { kGlibc = 0, kJemalloc, kTcmalloc, kMimalloc, kMusl, kUnknown };
inline constexpr uint8_t kMaxAllocator = 5;
const char* AllocatorName(Allocator a);  // "glibc", "jemalloc", ..., "unknown"

// How the structure layouts were found.
enum class LayoutSource : uint8_t { kNone = 0, kDwarf, kTable };
const char* LayoutSourceName(LayoutSource s);  // "none", "dwarf", "table"

// What kind of free memory a range is.
enum class FreeKind : uint8_t { kBin = 0, kFastbin = 1, kTcache = 2, kTop = 3 };
inline constexpr uint8_t kMaxFreeKind = 3;

// [start, end) free inside arena `arena` (an index into HeapSnapshot::arenas).
struct FreeRange {
  uint64_t start = 0, end = 0;
  uint32_t arena = 0;
  FreeKind kind = FreeKind::kBin;
  bool operator==(const FreeRange& o) const {
    return start == o.start && end == o.end && arena == o.arena && kind == o.kind;
  }
};

// The figures of one arena, or of the total of all arenas.
struct HeapFigures {
  uint64_t system_bytes = 0;
  uint64_t in_use_bytes = 0;
  uint64_t free_bytes = 0;     // bins + fastbins + tcache + top
  uint64_t tcache_bytes = 0;
  uint64_t fastbin_bytes = 0;
  uint64_t top_bytes = 0;
  uint64_t free_chunks = 0;    // binned + fastbin + tcache chunks (top not counted)
  uint64_t releasable_bytes = 0;
  std::optional<uint64_t> free_resident_bytes;
  std::optional<uint64_t> releasable_resident_bytes;
  void Add(const HeapFigures& o);
  bool operator==(const HeapFigures& o) const;
};

struct ArenaStats {
  uint64_t address = 0;  // its struct malloc_state
  bool main = false;     // main_arena (kind "main"), else a thread arena
  HeapFigures figures;
  uint64_t binned_chunks = 0;   // in the unsorted, small and large bins
  uint64_t fastbin_chunks = 0;
  uint64_t tcache_chunks = 0;
  uint64_t chunks = 0;          // chunks walked (in use and free; top not counted)
  uint64_t heaps = 0;           // heap_info segments (thread arenas); 1 for main
  uint64_t attached_threads = 0;
  // Empty when the walk found nothing wrong; else what was wrong, first
  // thing first ("bin 12: a cycle after 3 chunks", "chunk at 0x... has
  // impossible size 0x..."). The figures are then what could be counted.
  std::string damage;
  // The arena changed under every read of a live process (retried): its
  // figures mix moments.
  bool torn = false;
  bool operator==(const ArenaStats& o) const;
};

struct HeapSnapshot {
  uint32_t pid = 0;
  Allocator allocator = Allocator::kGlibc;
  // Why nothing was walked (a foreign allocator, no libc found, ...): one
  // line for the user; empty when arenas were walked.
  std::string note;
  std::string glibc_version;        // "2.36"; empty if unknown
  LayoutSource layout = LayoutSource::kNone;
  std::string layout_from;          // the debug file read, or "built-in table for 2.36"
  std::optional<uint64_t> time;     // ns on CLOCK_MONOTONIC (perf's seconds x 1e9); none for a core
  uint32_t attempts = 0;            // reads of a live process it took (1: consistent first time)
  std::vector<ArenaStats> arenas;   // main_arena first, then its `next` list in order
  uint64_t mmapped_count = 0;       // mp_.n_mmaps
  uint64_t mmapped_bytes = 0;       // mp_.mmapped_mem
  uint64_t arena_max = 0;           // mp_.arena_max (0: not set)
  uint64_t arena_test = 0;          // mp_.arena_test
  std::optional<uint64_t> threads;  // threads of the process, when known
  std::optional<uint64_t> cpus;     // online CPUs of the machine it runs on (live only)
  std::vector<FreeRange> free_ranges;

  HeapFigures Totals() const;
  // How many arenas glibc makes at most (arena.c, arena_get2): mp_.arena_max
  // when set (M_ARENA_MAX, MALLOC_ARENA_MAX), else 8 per core on 64-bit
  // (NARENAS_FROM_NCORES); unknown without the core count.
  std::optional<uint64_t> ArenaLimit() const;
  bool operator==(const HeapSnapshot& o) const;
};

}  // namespace pageblame::heap

#endif  // PAGEBLAME_HEAP_HEAP_SNAPSHOT_H_

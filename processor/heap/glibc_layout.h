// GlibcLayout: where the fields the heap walker reads lie inside glibc
// malloc's structures (struct malloc_state, struct malloc_par, heap_info,
// tcache_perthread_struct, tcache_entry) for one build of glibc on x86-64,
// and which of the version-dependent rules hold (safe-linking, what a
// tcache entry's key holds). Found from the build's DWARF (dwarf_layout.h)
// or, without a debug file, from the built-in table below.
//
//   std::optional<GlibcLayout> l = BuiltinLayout(2, 36);
//   uint64_t top = arena + l->state_top;
//
// The built-in table is derived from glibc's malloc/malloc.c and
// malloc/arena.c of each release (x86-64, tunables on, as every
// distribution builds it):
//   2.26+  malloc_state: mutex, flags, have_fastchunks, fastbinsY[10], top,
//          last_remainder, bins[254], binmap[4], next, next_free,
//          attached_threads, system_mem, max_system_mem (2200 bytes; same
//          through 2.40)
//   2.28-2.34 malloc_par without the huge-page fields; 2.35+ adds
//          thp_pagesize, hp_pagesize, hp_flags after arena_max
//   2.28-2.34 heap_info {ar_ptr, prev, size, mprotect_size} (32 bytes);
//          2.35+ adds pagesize and padding (48 bytes)
//   2.28-2.29 tcache counts are char[64]; 2.30+ uint16_t[64]
//   2.28 tcache_entry {next}; 2.29-2.33 {next, key = its thread's
//          tcache_perthread_struct}; 2.34+ {next, key = tcache_key, one
//          random value per process}
//   2.32+  safe-linking: fastbin and tcache `next` pointers are stored as
//          (address of the field >> 12) ^ pointer (PROTECT_PTR)
// A test checks the 2.36 row against libc6-dbg's DWARF on the build machine.
#ifndef PAGEBLAME_HEAP_GLIBC_LAYOUT_H_
#define PAGEBLAME_HEAP_GLIBC_LAYOUT_H_

#include <cstdint>
#include <optional>
#include <string>

namespace pageblame::heap {

// What a tcache entry's second word holds.
enum class TcacheKey : uint8_t {
  kNone,        // 2.28: no key
  kPerthread,   // 2.29-2.33: the address of the owning tcache_perthread_struct
  kRandom,      // 2.34+: the process's tcache_key
};

struct GlibcLayout {
  int major = 2, minor = 0;
  // struct malloc_state
  uint64_t state_size = 0;
  uint64_t state_flags = 0, state_fastbins = 0, state_top = 0, state_bins = 0;
  uint64_t state_next = 0, state_attached_threads = 0, state_system_mem = 0;
  uint32_t nfastbins = 10;
  uint32_t nbins = 128;  // bins[] holds (nbins - 1) * 2 pointers
  // struct malloc_par
  uint64_t par_size = 0;
  uint64_t par_trim_threshold = 0, par_top_pad = 0, par_mmap_threshold = 0, par_arena_test = 0,
           par_arena_max = 0;
  std::optional<uint64_t> par_thp_pagesize, par_hp_pagesize;  // 2.35+
  uint64_t par_n_mmaps = 0, par_mmapped_mem = 0, par_sbrk_base = 0;
  uint64_t par_tcache_bins = 0, par_tcache_max_bytes = 0, par_tcache_count = 0;
  // heap_info
  uint64_t heap_info_size = 0;
  uint64_t heap_ar_ptr = 0, heap_prev = 0, heap_size = 0, heap_mprotect_size = 0;
  // tcache_perthread_struct and tcache_entry
  uint32_t tcache_bins = 64;
  uint64_t tcache_struct_size = 0;
  uint32_t tcache_count_bytes = 2;  // 1 (char) or 2 (uint16_t)
  uint64_t tcache_entries = 0;      // offset of entries[] in the struct
  uint64_t tcache_entry_key = 8;    // offset of key in tcache_entry
  TcacheKey tcache_key = TcacheKey::kRandom;
  bool safe_linking = true;
  // HEAP_MAX_SIZE: thread arena heaps are aligned to it (2 x
  // DEFAULT_MMAP_THRESHOLD_MAX = 64 MiB on 64-bit).
  uint64_t heap_max_size = uint64_t{64} << 20;

  std::string Version() const;  // "2.36"
};

// The rules that follow from the version alone (key kind, safe-linking,
// heap size); the offsets are left as they are.
void SetVersionRules(GlibcLayout* l);

// The built-in layout of glibc major.minor on x86-64, or nullopt for a
// version outside 2.28-2.40.
std::optional<GlibcLayout> BuiltinLayout(int major, int minor);

// "2.36" -> {2, 36}; false if it is not "N.N".
bool ParseGlibcVersion(const std::string& text, int* major, int* minor);

}  // namespace pageblame::heap

#endif  // PAGEBLAME_HEAP_GLIBC_LAYOUT_H_

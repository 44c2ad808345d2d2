#include "processor/heap/glibc_layout.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace pageblame::heap {

std::string GlibcLayout::Version() const { return absl::StrCat(major, ".", minor); }

void SetVersionRules(GlibcLayout* l) {
  const int v = l->minor;
  l->tcache_key = v >= 34 ? TcacheKey::kRandom : v >= 29 ? TcacheKey::kPerthread : TcacheKey::kNone;
  l->safe_linking = v >= 32;
}

namespace {

// malloc_state: the same from 2.26 to 2.40 (malloc.c, "struct malloc_state").
void SetState(GlibcLayout* l) {
  l->state_flags = 4;
  l->state_fastbins = 16;                    // after mutex, flags, have_fastchunks (+4 padding)
  l->state_top = l->state_fastbins + 10 * 8;  // NFASTBINS = 10 on 64-bit
  l->state_bins = l->state_top + 16;         // after top, last_remainder
  const uint64_t binmap = l->state_bins + 254 * 8;
  l->state_next = binmap + 16;               // unsigned int binmap[4]
  l->state_attached_threads = l->state_next + 16;  // after next, next_free
  l->state_system_mem = l->state_attached_threads + 8;
  l->state_size = l->state_system_mem + 16;  // + max_system_mem
}

// malloc_par: trim_threshold, top_pad, mmap_threshold, arena_test,
// arena_max, [thp_pagesize, hp_pagesize, int hp_flags: 2.35+], int n_mmaps,
// n_mmaps_max, max_n_mmaps, no_dyn_threshold, mmapped_mem, max_mmapped_mem,
// sbrk_base, tcache_bins, tcache_max_bytes, tcache_count,
// tcache_unsorted_limit.
void SetPar(GlibcLayout* l, bool huge_pages) {
  l->par_trim_threshold = 0;
  l->par_top_pad = 8;
  l->par_mmap_threshold = 16;
  l->par_arena_test = 24;
  l->par_arena_max = 32;
  uint64_t at = 40;
  if (huge_pages) {
    l->par_thp_pagesize = 40;
    l->par_hp_pagesize = 48;
    at = 60;  // after int hp_flags at 56
  }
  l->par_n_mmaps = at;
  // Four ints; mmapped_mem is 8-aligned after them.
  l->par_mmapped_mem = (at + 16 + 7) & ~uint64_t{7};
  l->par_sbrk_base = l->par_mmapped_mem + 16;  // after max_mmapped_mem
  l->par_tcache_bins = l->par_sbrk_base + 8;
  l->par_tcache_max_bytes = l->par_tcache_bins + 8;
  l->par_tcache_count = l->par_tcache_max_bytes + 8;
  l->par_size = l->par_tcache_count + 16;  // + tcache_unsorted_limit
}

}  // namespace

std::optional<GlibcLayout> BuiltinLayout(int major, int minor) {
  if (major != 2 || minor < 28 || minor > 40) return std::nullopt;
  GlibcLayout l;
  l.major = major;
  l.minor = minor;
  SetState(&l);
  SetPar(&l, minor >= 35);
  l.heap_ar_ptr = 0;
  l.heap_prev = 8;
  l.heap_size = 16;
  l.heap_mprotect_size = 24;
  l.heap_info_size = minor >= 35 ? 48 : 32;
  l.tcache_count_bytes = minor >= 30 ? 2 : 1;
  l.tcache_entries = 64 * l.tcache_count_bytes;
  l.tcache_struct_size = l.tcache_entries + 64 * 8;
  SetVersionRules(&l);
  return l;
}

bool ParseGlibcVersion(const std::string& text, int* major, int* minor) {
  std::vector<std::string> parts = absl::StrSplit(text, '.');
  return parts.size() == 2 && absl::SimpleAtoi(parts[0], major) && absl::SimpleAtoi(parts[1], minor);
}

}  // namespace pageblame::heap

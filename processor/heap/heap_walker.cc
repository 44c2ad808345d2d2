#include "processor/heap/heap_walker.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "processor/base/format.h"
#include "processor/base/status_macros.h"
#include "processor/heap/allocator_detector.h"
#include "processor/heap/arena_locator.h"
#include "processor/heap/arena_walker.h"
#include "processor/heap/tcache_scanner.h"
#include "processor/heap/trim_model.h"
#include "processor/residency/pagemap_sampler.h"

namespace pageblame::heap {
namespace {

// What the walker reads of mp_.
struct Par {
  uint64_t sbrk_base = 0, n_mmaps = 0, mmapped_mem = 0, arena_max = 0, arena_test = 0;
  uint64_t hp_pagesize = 0, thp_pagesize = 0;
};

bool ReadPar(TargetMemory* m, const GlibcLayout& l, uint64_t mp, Par* p) {
  std::string b(l.par_size, '\0');
  if (!m->Read(mp, b.data(), b.size())) return false;
  auto word = [&](uint64_t off) {
    uint64_t v = 0;
    std::memcpy(&v, b.data() + off, 8);
    return v;
  };
  int32_t n = 0;
  std::memcpy(&n, b.data() + l.par_n_mmaps, 4);
  p->n_mmaps = n < 0 ? 0 : static_cast<uint64_t>(n);
  p->sbrk_base = word(l.par_sbrk_base);
  p->mmapped_mem = word(l.par_mmapped_mem);
  p->arena_max = word(l.par_arena_max);
  p->arena_test = word(l.par_arena_test);
  p->hp_pagesize = l.par_hp_pagesize ? word(*l.par_hp_pagesize) : 0;
  p->thp_pagesize = l.par_thp_pagesize ? word(*l.par_thp_pagesize) : 0;
  return true;
}

// heap_max_size(): HEAP_MAX_SIZE, or 4 huge pages when glibc.malloc.hugetlb
// gave mp_.hp_pagesize (2.35+).
uint64_t HeapMax(const GlibcLayout& l, const Par& p) {
  const uint64_t v = p.hp_pagesize ? p.hp_pagesize * 4 : l.heap_max_size;
  return (v & (v - 1)) == 0 && v >= (uint64_t{1} << 20) ? v : l.heap_max_size;
}

// main_arena, then its `next` list until it comes back. A thread arena sits
// right after the heap_info at the start of its first heap, so its address
// minus sizeof (heap_info) is aligned to the heap size.
std::vector<uint64_t> ArenaList(TargetMemory* m, const GlibcLayout& l, uint64_t main, uint64_t heap_max,
                                std::string* problem) {
  std::vector<uint64_t> out = {main};
  absl::flat_hash_set<uint64_t> seen = {main};
  uint64_t a = main;
  for (;;) {
    if (!m->ReadWord(a + l.state_next, &a)) {
      *problem = absl::StrCat("cannot read the next arena after ", Hex(out.back()),
                              ": the arenas after it (if any) are not walked");
      break;
    }
    if (a == main) break;
    if (a == 0 && out.size() == 1) break;  // malloc never initialized
    if (a < l.heap_info_size || (a - l.heap_info_size) % heap_max != 0 || !seen.insert(a).second ||
        out.size() >= ArenaWalker::kMaxHeaps) {
      *problem = absl::StrCat("the arena list goes from ", Hex(out.back()), " to ", Hex(a),
                              ", which is not a thread arena; the arenas after it are not walked");
      break;
    }
    out.push_back(a);
  }
  return out;
}

struct Attempt {
  Par par;
  std::vector<ArenaWalk> walks;
  TcacheScanner::Result tcache;
  std::string list_problem;
};

Attempt WalkOnce(TargetMemory* m, const LibcImage& libc, uint64_t main, uint64_t mp) {
  Attempt a;
  const GlibcLayout& l = libc.layout;
  if (!ReadPar(m, l, mp, &a.par)) a.list_problem = absl::StrCat("cannot read mp_ at ", Hex(mp));
  const uint64_t heap_max = HeapMax(l, a.par);
  ArenaWalker walker(m, l, {a.par.sbrk_base, heap_max});
  for (uint64_t arena : ArenaList(m, l, main, heap_max, &a.list_problem))
    a.walks.push_back(walker.Walk(arena, arena == main));
  std::optional<uint64_t> key;
  uint64_t v;
  if (libc.tcache_key && m->ReadWord(*libc.tcache_key, &v)) key = v;
  TcacheScanner scanner(m, l, key, [&](uint64_t k) { return ArenaLocator::DataHolds(m, libc.path, k); });
  a.tcache = scanner.Scan(&a.walks);
  return a;
}

// Re-reads every arena's malloc_state and every tcache struct (the cache
// dropped): `changed` says which arenas' bytes differ. True if nothing did.
bool Unchanged(TargetMemory* m, const GlibcLayout& l, const Attempt& a, std::vector<bool>* changed) {
  m->Forget();
  bool same = true;
  changed->assign(a.walks.size(), false);
  for (size_t i = 0; i < a.walks.size(); ++i) {
    const ArenaWalk& w = a.walks[i];
    std::string now(w.header.size(), '\0');
    if (!m->Read(w.address, now.data(), now.size()) || now != w.header) {
      same = false;
      (*changed)[i] = true;
    }
  }
  // Each tcache struct, against the bytes the scan read; a change counts
  // against the arena holding the struct.
  for (size_t k = 0; k < a.tcache.structs.size(); ++k) {
    std::string b(l.tcache_struct_size, '\0');
    m->Read(a.tcache.structs[k], b.data(), b.size());
    if (b == a.tcache.raw.substr(k * b.size(), b.size())) continue;
    same = false;
    for (size_t i = 0; i < a.walks.size(); ++i)
      if (a.walks[i].InHeaps(a.tcache.structs[k], b.size())) (*changed)[i] = true;
  }
  return same;
}

bool AnyDamage(const Attempt& a) {
  if (!a.list_problem.empty()) return true;
  for (const ArenaWalk& w : a.walks) {
    if (!w.damage.empty()) return true;
  }
  return false;
}

FreeKind KindOf(ChunkState s) {
  switch (s) {
    case ChunkState::kFast: return FreeKind::kFastbin;
    case ChunkState::kTcache: return FreeKind::kTcache;
    default: return FreeKind::kBin;
  }
}

// The free chunks and top of arena `index`, appended to `out`.
void AddFreeRanges(const ArenaWalk& w, uint32_t index, std::vector<FreeRange>* out) {
  auto add = [&](uint64_t start, uint64_t end, FreeKind k) {
    if (!out->empty() && out->back().end == start && out->back().arena == index && out->back().kind == k)
      out->back().end = end;
    else
      out->push_back({start, end, index, k});
  };
  w.ForEachNoted([&](const WalkedChunk& c) {
    if (c.state() == ChunkState::kBinned || c.state() == ChunkState::kFast || c.state() == ChunkState::kTcache)
      add(c.addr(), c.addr() + c.size(), KindOf(c.state()));
  });
  for (const WalkedChunk& c : w.loose) add(c.addr(), c.addr() + c.size(), KindOf(c.state()));
  if (w.top_size > 0) add(w.top, w.top + w.top_size, FreeKind::kTop);
}

// `free_resident`: the resident bytes of the arena's free ranges, if known.
ArenaStats Stats(const ArenaWalk& w, const Attempt& a, const residency::ResidencySnapshot* r,
                 std::optional<uint64_t> free_resident, uint64_t page_size) {
  ArenaStats s;
  s.address = w.address;
  s.main = w.main;
  s.binned_chunks = w.binned_count;
  s.fastbin_chunks = w.fast_count;
  s.tcache_chunks = w.tcache_count;
  s.chunks = w.chunks.size();
  s.heaps = w.heaps.size();
  s.attached_threads = w.attached_threads;
  s.damage = w.damage;
  HeapFigures& f = s.figures;
  f.system_bytes = w.system_mem;
  f.top_bytes = w.top_size;
  f.fastbin_bytes = w.fast_bytes;
  f.tcache_bytes = w.tcache_bytes;
  f.free_bytes = w.binned_bytes + w.fast_bytes + w.tcache_bytes + w.top_size;
  f.in_use_bytes = f.free_bytes <= f.system_bytes ? f.system_bytes - f.free_bytes : 0;
  if (f.free_bytes > f.system_bytes && s.damage.empty())
    s.damage = absl::StrCat("its free chunks (", f.free_bytes, " bytes) exceed its system_mem (", f.system_bytes, ")");
  f.free_chunks = w.binned_count + w.fast_count + w.tcache_count;
  f.free_resident_bytes = free_resident;
  if (r != nullptr) f.releasable_resident_bytes = 0;
  for (const residency::PageRange& p : TrimModel::Releasable(w, page_size, a.par.thp_pagesize)) {
    f.releasable_bytes += p.size();
    if (r != nullptr) *f.releasable_resident_bytes += r->ResidentBytes(p.start, p.end);
  }
  return s;
}

void Fill(const Attempt& a, const std::vector<bool>& torn, const residency::ResidencySnapshot* r, uint64_t page_size,
          HeapSnapshot* s) {
  s->mmapped_count = a.par.n_mmaps;
  s->mmapped_bytes = a.par.mmapped_mem;
  s->arena_max = a.par.arena_max;
  s->arena_test = a.par.arena_test;
  uint64_t ranges = 0;  // at most: millions in a heap of small chunks
  for (const ArenaWalk& w : a.walks) ranges += w.binned_count + w.fast_count + w.tcache_count + 1;
  s->free_ranges.reserve(ranges);
  for (uint32_t i = 0; i < a.walks.size(); ++i) AddFreeRanges(a.walks[i], i, &s->free_ranges);
  // Already in order (one arena; arenas listed in address order): no sort.
  // Only then: std::sort need not keep equal starts (overlapping lists of
  // a damaged arena) in the order given.
  auto before = [](const FreeRange& x, const FreeRange& y) { return x.start < y.start; };
  if (std::adjacent_find(s->free_ranges.begin(), s->free_ranges.end(),
                         [&](const FreeRange& x, const FreeRange& y) { return !before(x, y); }) != s->free_ranges.end())
    std::sort(s->free_ranges.begin(), s->free_ranges.end(), before);
  // One pass over the ranges (millions in a heap of small chunks), not one per arena.
  std::vector<uint64_t> free_resident(a.walks.size(), 0);
  if (r != nullptr) {
    for (const FreeRange& fr : s->free_ranges) free_resident[fr.arena] += r->ResidentBytes(fr.start, fr.end);
  }
  for (uint32_t i = 0; i < a.walks.size(); ++i) {
    s->arenas.push_back(Stats(a.walks[i], a, r, r ? std::optional<uint64_t>(free_resident[i]) : std::nullopt, page_size));
    s->arenas.back().torn = i < torn.size() && torn[i];
  }
  // The arena whose `next` could not be followed is the last one listed.
  if (!a.list_problem.empty()) {
    s->note = a.list_problem;
    if (!s->arenas.empty() && s->arenas.back().damage.empty()) s->arenas.back().damage = a.list_problem;
  }
}

// The pages the resident figures ask about: every arena's heaps and its top
// chunk (whole pages, sorted, disjoint). Pagemap is read only there.
std::vector<residency::PageRange> ArenaPages(const Attempt& a) {
  constexpr uint64_t kPage = 4096, kLast = ~uint64_t{0} - kPage;
  std::vector<residency::PageRange> r;
  auto add = [&](uint64_t start, uint64_t end) {
    if (end <= start) return;
    r.push_back({start / kPage * kPage, end > kLast ? kLast / kPage * kPage : (end + kPage - 1) / kPage * kPage});
  };
  for (const ArenaWalk& w : a.walks) {
    for (const WalkedHeap& h : w.heaps) add(h.start, h.end);
    add(w.top, w.top + w.top_size);
  }
  std::sort(r.begin(), r.end(), [](const residency::PageRange& x, const residency::PageRange& y) { return x.start < y.start; });
  std::vector<residency::PageRange> out;
  for (const residency::PageRange& p : r) {
    if (!out.empty() && p.start <= out.back().end) out.back().end = std::max(out.back().end, p.end);
    else out.push_back(p);
  }
  return out;
}

// main_arena and mp_: by symbol, else by their shape in libc's data.
absl::Status Locate(TargetMemory* m, const LibcImage& libc, uint64_t* main, uint64_t* mp, std::string* how) {
  if (libc.main_arena && libc.mp) {
    *main = *libc.main_arena;
    *mp = *libc.mp;
    *how = "main_arena and mp_ from libc's symbols";
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(*main, ArenaLocator::FindMainArena(m, libc.layout, libc.path));
  ASSIGN_OR_RETURN(*mp, ArenaLocator::FindMallocPar(m, libc.layout, libc.path, *main));
  *how = "main_arena and mp_ found by their shape in libc's data";
  return absl::OkStatus();
}

absl::StatusOr<LibcImage> LoadLibc(const TargetMemory& memory, const AllocatorDetector::Found& det,
                                   const HeapWalkOptions& options) {
  const auto key = std::make_tuple(memory.pid(), det.libc_path, det.libc_base);
  if (options.libc_cache != nullptr) {
    if (auto it = options.libc_cache->find(key); it != options.libc_cache->end()) return it->second;
  }
  ASSIGN_OR_RETURN(LibcImage libc, LibcImage::Load(memory, det.libc_path, det.libc_base, options.libc));
  if (options.libc_cache != nullptr) options.libc_cache->emplace(key, libc);
  return libc;
}

}  // namespace

absl::StatusOr<HeapSnapshot> HeapWalker::Walk(TargetMemory* memory, const HeapWalkOptions& options) {
  HeapSnapshot s;
  s.pid = memory->pid();
  s.threads = memory->threads();
  const AllocatorDetector::Found det = AllocatorDetector::Detect(*memory);
  s.allocator = det.allocator;
  if (det.allocator != Allocator::kGlibc) {
    s.note = det.note;
    return s;
  }
  ASSIGN_OR_RETURN(LibcImage libc, LoadLibc(*memory, det, options));
  s.glibc_version = libc.layout.Version();
  s.layout = libc.source;
  uint64_t main = 0, mp = 0;
  std::string how;
  RETURN_IF_ERROR(Locate(memory, libc, &main, &mp, &how));
  s.layout_from = absl::StrCat(libc.layout_from, "; ", how);
  residency::PagemapSampler sampler;
  if (memory->live()) {
    s.time = sampler.Now();
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus > 0) s.cpus = static_cast<uint64_t>(cpus);
  }
  Attempt a;
  std::vector<bool> changed;
  const int attempts = std::max(1, options.attempts);
  for (int n = 1; n <= attempts; ++n) {
    memory->Forget();
    if (memory->live()) memory->Refresh();
    a = WalkOnce(memory, libc, main, mp);
    s.attempts = n;
    if (!memory->live()) break;
    const bool same = Unchanged(memory, libc.layout, a, &changed);
    if (same && !AnyDamage(a)) break;
    if (same && n >= 2) break;  // stable twice over: the damage is real
    if (n == attempts) {
      // It never held still: what looks damaged was read while it changed.
      for (size_t i = 0; i < a.walks.size(); ++i) changed[i] = changed[i] || !a.walks[i].damage.empty();
    }
  }
  std::optional<residency::ResidencySnapshot> taken;
  const residency::ResidencySnapshot* r = options.residency;
  if (r == nullptr && memory->live() && options.read_pagemap) {
    absl::StatusOr<residency::ResidencySnapshot> t =
        sampler.TakeWithin(memory->pid(), residency::SnapshotReason::kRequested, ArenaPages(a));
    if (t.ok()) taken = *std::move(t);
    if (taken) r = &*taken;
  }
  Fill(a, changed, r, options.page_size, &s);
  return s;
}

}  // namespace pageblame::heap

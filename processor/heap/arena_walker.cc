#include "processor/heap/arena_walker.h"

#include "processor/base/format.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "processor/heap/heap_reader.h"

namespace pageblame::heap {
namespace {

uint64_t AlignUp(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

}  // namespace

std::string Hex(uint64_t v) { return absl::StrFormat("0x%x", v); }

uint64_t TcacheStructChunkSize(const GlibcLayout& l) {
  if (l.tcache_struct_size == 0) return 0;
  const uint64_t n = (l.tcache_struct_size + kSizeSz + kAlign - 1) & ~(kAlign - 1);
  return n < kMinSize ? kMinSize : n;
}

ArenaWalker::ArenaWalker(TargetMemory* memory, const GlibcLayout& layout, Params params)
    : memory_(memory), layout_(layout), params_(params), tcache_struct_chunk_(TcacheStructChunkSize(layout)) {
  // fastbin_index(size) = size / 16 - 2 < nfastbins; tcache bin i holds i * 16 + 32.
  list_max_ = (uint64_t{layout.nfastbins} + 1) * kAlign;
  if (tcache_struct_chunk_ != 0) list_max_ = std::max<uint64_t>(list_max_, uint64_t{layout.tcache_bins} * kAlign + kAlign);
}

uint64_t ArenaWalker::HeaderWord(const ArenaWalk& w, uint64_t offset) const {
  uint64_t v = 0;
  if (offset + 8 <= w.header.size()) std::memcpy(&v, w.header.data() + offset, 8);
  return v;
}

bool ArenaWalker::ReadHeader(ArenaWalk* w) {
  w->header.assign(layout_.state_size, '\0');
  if (!memory_->Read(w->address, w->header.data(), w->header.size())) {
    w->Damage(absl::StrCat("cannot read its malloc_state at ", Hex(w->address)));
    return false;
  }
  w->top = HeaderWord(*w, layout_.state_top);
  w->system_mem = HeaderWord(*w, layout_.state_system_mem);
  w->attached_threads = HeaderWord(*w, layout_.state_attached_threads);
  w->flags = HeaderWord(*w, layout_.state_flags) & 0xffffffff;
  return true;
}

ArenaWalk ArenaWalker::Walk(uint64_t arena, bool main) {
  ArenaWalk w;
  w.address = arena;
  w.main = main;
  visited_.clear();
  if (!ReadHeader(&w)) return w;
  // An arena no malloc has used yet: top is still initial_top, the
  // unsorted bin's pseudo-chunk inside malloc_state (malloc.c).
  if (w.top == arena + layout_.state_bins - kChunkHeader) return w;
  if (w.top % kAlign != 0 || !memory_->ReadWord(w.top + kSizeSz, &w.top_size)) {
    w.Damage(absl::StrCat("its top chunk ", Hex(w.top), " cannot be read"));
    return w;
  }
  w.top_size &= ~kSizeBits;
  main ? FindMainHeap(&w) : FindThreadHeaps(&w);
  chunks_complete_ = !w.heaps.empty();
  for (WalkedHeap& h : w.heaps) {
    if (h.walkable) WalkChunks(&w, &h);
    chunks_complete_ &= h.complete;
  }
  WalkBins(&w);
  WalkFastbins(&w);
  return w;
}

void ArenaWalker::FindMainHeap(ArenaWalk* w) {
  const uint64_t end = w->top + w->top_size;
  const uint64_t first = AlignUp(params_.sbrk_base, kAlign);
  if (end < w->top || w->top_size % kAlign != 0) {
    w->Damage(absl::StrCat("its top chunk at ", Hex(w->top), " has impossible size ", Hex(w->top_size)));
    return;
  }
  // NONCONTIGUOUS_BIT (2): sbrk failed and glibc went on with mmap, so the
  // chunks are not one run from sbrk_base to top; only top is known.
  const bool contiguous = (w->flags & 2) == 0 && params_.sbrk_base != 0 && first <= w->top;
  if (!contiguous) {
    w->Damage(absl::StrCat("main_arena is not one brk area (sbrk_base ", Hex(params_.sbrk_base), ", top ",
                           Hex(w->top), "): only its top and free lists are counted"));
    w->heaps.push_back({w->top, end, w->top, w->top, false, false});
    return;
  }
  w->heaps.push_back({params_.sbrk_base, end, first, w->top, false});
}

void ArenaWalker::FindThreadHeaps(ArenaWalk* w) {
  uint64_t h = w->top & ~(params_.heap_max - 1);
  bool found_first = false;
  for (uint64_t n = 0; h != 0 && n < kMaxHeaps; ++n) {
    uint64_t ar = 0, prev = 0, size = 0;
    if (!memory_->ReadWord(h + layout_.heap_ar_ptr, &ar) || !memory_->ReadWord(h + layout_.heap_prev, &prev) ||
        !memory_->ReadWord(h + layout_.heap_size, &size)) {
      w->Damage(absl::StrCat("cannot read its heap_info at ", Hex(h)));
      break;
    }
    if (ar != w->address || size > params_.heap_max || size < layout_.heap_info_size + kMinSize ||
        prev % params_.heap_max != 0) {
      w->Damage(absl::StrCat("heap_info at ", Hex(h), " does not belong to it (ar_ptr ", Hex(ar), ", size ",
                             Hex(size), ", prev ", Hex(prev), ")"));
      break;
    }
    const bool first = h + layout_.heap_info_size == w->address;
    const uint64_t chunks = AlignUp(first ? w->address + layout_.state_size : h + layout_.heap_info_size, kAlign);
    const bool has_top = w->top >= h && w->top < h + size;
    w->heaps.push_back({h, h + size, chunks, has_top ? w->top : h + size, false});
    for (size_t i = 0; i + 1 < w->heaps.size(); ++i) {
      if (w->heaps[i].start == h) {
        w->Damage(absl::StrCat("its heap list loops back to ", Hex(h)));
        w->heaps.pop_back();
        h = 0;
      }
    }
    if (first) found_first = true;
    if (first || h == 0) break;
    h = prev;
  }
  if (!found_first) w->Damage("its heap list does not reach the heap holding the arena");
  if (!w->heaps.empty() && !(w->top >= w->heaps.front().start && w->top < w->heaps.front().end))
    w->Damage(absl::StrCat("its top ", Hex(w->top), " is not in the heap heap_for_ptr(top) names"));
  std::sort(w->heaps.begin(), w->heaps.end(), [](const WalkedHeap& a, const WalkedHeap& b) { return a.start < b.start; });
}

bool ArenaWalker::MayBeListed(uint64_t addr, uint64_t size, uint64_t fd) {
  if (size == tcache_struct_chunk_) return true;
  if (size < kMinSize || size > list_max_) return false;
  // REVEAL_PTR of a fastbin's fd or a tcache entry's next (both at addr + 16).
  const uint64_t next = layout_.safe_linking ? ((addr + 16) >> 12) ^ fd : fd;
  if (next == 0) return true;
  if (next % kAlign != 0) return false;
  if (next >= last_mapping_start_ && next < last_mapping_end_) return true;
  const TargetMapping* m = memory_->MappingAt(next);
  if (m == nullptr) return false;
  last_mapping_start_ = m->start;
  last_mapping_end_ = m->end;
  return true;
}

void ArenaWalker::WalkChunks(ArenaWalk* w, WalkedHeap* h) {
  const bool top_heap = h->chunks_end == w->top;
  const uint64_t end = top_heap ? w->top : h->end;
  HeapReader reader(memory_, end);
  uint64_t p = h->chunks_start;
  // The chunk before p: added once the header at p says whether it is free.
  struct {
    uint64_t addr = 0, size = 0, raw = 0, fd = 0, key = 0;
    bool three = false;
  } last;
  bool have_last = false, first = true;
  auto add_last = [&](bool free_bit) {
    if (!have_last) return;
    const ChunkState state = last.size < kMinSize ? ChunkState::kFence : ChunkState::kInUse;
    if (free_bit || (last.three && state == ChunkState::kInUse && MayBeListed(last.addr, last.size, last.fd)))
      w->chunks.AddRecord(WalkedChunk(last.addr, last.size, state, static_cast<uint8_t>(last.raw & kSizeBits),
                                      free_bit, last.fd, last.key, last.three),
                          first);
    else
      w->chunks.Add(last.addr, last.size, first);
    first = have_last = false;
  };
  while (p < end) {
    uint64_t words[3] = {0, 0, 0};  // size, fd, bk
    const uint8_t* b = reader.At(p + kSizeSz, sizeof(words));
    const bool three = b != nullptr;
    if (!three) b = reader.At(p + kSizeSz, 8);
    if (b == nullptr) {
      add_last(false);
      w->Damage(absl::StrCat("cannot read the chunk header at ", Hex(p)));
      return;
    }
    std::memcpy(words, b, three ? sizeof(words) : 8);
    const uint64_t raw = words[0];
    add_last((raw & kPrevInuse) == 0);
    const uint64_t size = raw & ~kSizeBits;
    // An older heap ends with fenceposts: a 16-byte chunk, then a header of
    // size 0 (sysmalloc, "Setup fencepost").
    if (size == 0 && !top_heap && end - p >= kChunkHeader) {
      h->chunks_end = p;
      h->complete = true;
      return;
    }
    if (size % kAlign != 0 || size < kChunkHeader || size > end - p || (size < kMinSize && top_heap)) {
      w->Damage(absl::StrCat("the chunk at ", Hex(p), " has impossible size ", Hex(raw)));
      return;
    }
    last = {p, size, raw, words[1], words[2], three};
    have_last = true;
    p += size;
  }
  if (!top_heap || p != w->top) {
    add_last(false);
    w->Damage(absl::StrCat("the chunks from ", Hex(h->chunks_start), " run to ", Hex(p), ", not to ",
                           top_heap ? "its top " : "a fencepost before the heap's end ", Hex(end)));
    return;
  }
  uint64_t top_raw = 0;
  memory_->ReadWord(w->top + kSizeSz, &top_raw);
  add_last((top_raw & kPrevInuse) == 0);
  h->complete = true;
}

bool ArenaWalker::Visit(ArenaWalk* w, uint64_t addr, const std::string& list, uint64_t step, uint64_t* raw_size,
                        WalkedChunk** chunk) {
  *chunk = nullptr;
  if (addr % kAlign != 0 || !w->InHeaps(addr, kMinSize)) {
    w->Damage(absl::StrCat(list, ": pointer ", Hex(addr), " after ", step, " chunks is outside the arena's heaps"));
    return false;
  }
  if (chunks_complete_) {
    WalkedChunk* c = w->ChunkAt(addr);
    if (c == nullptr) {
      w->Damage(absl::StrCat(list, ": ", Hex(addr), " after ", step, " chunks is not the start of a chunk"));
      return false;
    }
    if (c->seen()) {
      w->Damage(absl::StrCat(list, ": a cycle: the chunk at ", Hex(addr), " is met again after ", step,
                             " chunks (or it is on two lists)"));
      return false;
    }
    c->set_seen(true);
    *raw_size = c->size() | c->flags();
    *chunk = c;
    return true;
  }
  if (visited_.size() >= kMaxListSteps || !visited_.insert(addr).second) {
    w->Damage(absl::StrCat(list, ": a cycle: the chunk at ", Hex(addr), " is met again after ", step, " chunks"));
    return false;
  }
  const uint64_t size = memory_->ReadWord(addr + kSizeSz, raw_size) ? (*raw_size & ~kSizeBits) : 0;
  if (size < kMinSize || size % kAlign != 0 || !w->InHeaps(addr, size)) {
    w->Damage(absl::StrCat(list, ": the chunk at ", Hex(addr), " has impossible size ", Hex(*raw_size)));
    return false;
  }
  return true;
}

void ArenaWalker::WalkBins(ArenaWalk* w) {
  for (uint32_t i = 1; i < layout_.nbins; ++i) WalkBin(w, i);
}

void ArenaWalker::WalkBin(ArenaWalk* w, uint32_t i) {
  // bin_at(i): the pseudo-chunk whose fd and bk are bins[2(i-1)] and bins[2(i-1)+1].
  const uint64_t at = layout_.state_bins + uint64_t{i - 1} * 16;
  const uint64_t bin = w->address + at - kChunkHeader;
  const std::string list = i == 1 ? "the unsorted bin" : absl::StrCat("bin ", i);
  uint64_t r = HeaderWord(*w, at);
  for (uint64_t step = 0; r != bin; ++step) {
    uint64_t raw = 0;
    WalkedChunk* c = nullptr;
    if (!Visit(w, r, list, step, &raw, &c)) return;
    if (c != nullptr) {
      if (!c->free_bit()) {
        w->Damage(absl::StrCat(list, ": the chunk at ", Hex(r), " is on it but glibc marks it in use"));
        return;
      }
      c->set_state(ChunkState::kBinned);
    } else {
      w->loose.emplace_back(r, raw & ~kSizeBits, ChunkState::kBinned, 0, true, 0, 0, false);
    }
    w->binned_bytes += raw & ~kSizeBits;
    w->binned_flag_bytes += raw & kSizeBits;
    ++w->binned_count;
    if (c != nullptr && c->words()) {
      r = c->fd;
    } else if (!memory_->ReadWord(r + 16, &r)) {
      w->Damage(absl::StrCat(list, ": cannot read the fd pointer of ", Hex(r)));
      return;
    }
  }
}

void ArenaWalker::WalkFastbins(ArenaWalk* w) {
  for (uint32_t i = 0; i < layout_.nfastbins; ++i) WalkFastbin(w, i, HeaderWord(*w, layout_.state_fastbins + i * 8));
}

void ArenaWalker::WalkFastbin(ArenaWalk* w, uint32_t index, uint64_t p) {
  const std::string list = absl::StrCat("fastbin ", index);
  for (uint64_t step = 0; p != 0; ++step) {
    uint64_t raw = 0;
    WalkedChunk* c = nullptr;
    if (!Visit(w, p, list, step, &raw, &c)) return;
    const uint64_t size = raw & ~kSizeBits;
    if ((size >> 4) - 2 != index) {  // fastbin_index()
      w->Damage(absl::StrCat(list, ": the chunk at ", Hex(p), " has size ", Hex(size), ", not this bin's"));
      return;
    }
    if (c != nullptr) c->set_state(ChunkState::kFast);
    else w->loose.emplace_back(p, size, ChunkState::kFast, 0, false, 0, 0, false);
    w->fast_bytes += size;
    ++w->fast_count;
    uint64_t next = c != nullptr ? c->fd : 0;
    if ((c == nullptr || !c->words()) && !memory_->ReadWord(p + 16, &next)) {
      w->Damage(absl::StrCat(list, ": cannot read the fd pointer of ", Hex(p)));
      return;
    }
    // REVEAL_PTR: safe-linking stores (&fd >> 12) ^ fd.
    p = layout_.safe_linking ? ((p + 16) >> 12) ^ next : next;
  }
}

}  // namespace pageblame::heap

#include "processor/heap/trim_model.h"

#include <algorithm>

namespace pageblame::heap {

residency::PageRange TrimModel::ChunkPages(uint64_t p, uint64_t size, uint64_t page_size) {
  const uint64_t psm1 = page_size - 1;
  if (size <= psm1 + kMallocChunkSize) return {};
  const uint64_t paligned = (p + kMallocChunkSize + psm1) & ~psm1;
  const uint64_t left = size - (paligned - p);
  if (left <= psm1) return {};
  return {paligned, paligned + (left & ~psm1)};
}

std::vector<residency::PageRange> TrimModel::Releasable(const ArenaWalk& w, uint64_t page_size,
                                                        uint64_t thp_page_size) {
  std::vector<residency::PageRange> out;
  uint64_t top_start = w.top;
  auto add = [&](uint64_t p, uint64_t size) {
    const residency::PageRange r = ChunkPages(p, size, page_size);
    if (r.end > r.start) out.push_back(r);
  };
  for (const WalkedHeap& h : w.heaps) {
    if (!h.complete) continue;
    auto first = std::lower_bound(w.chunks.begin(), w.chunks.end(), h.chunks_start,
                                  [](const WalkedChunk& c, uint64_t a) { return c.addr < a; });
    for (auto it = first; it != w.chunks.end() && it->addr < h.chunks_end;) {
      const bool free = it->state == ChunkState::kBinned || it->state == ChunkState::kFast;
      if (!free) {
        ++it;
        continue;
      }
      // A run of free chunks; with a fastbin chunk in it, consolidation
      // makes it one chunk.
      auto run_end = it;
      bool fast = false;
      while (run_end != w.chunks.end() && run_end->addr < h.chunks_end &&
             (run_end->state == ChunkState::kBinned || run_end->state == ChunkState::kFast)) {
        fast |= run_end->state == ChunkState::kFast;
        ++run_end;
      }
      const uint64_t start = it->addr;
      const uint64_t end = (run_end - 1)->addr + (run_end - 1)->size;
      if (fast && end == w.top) {
        top_start = start;  // merged into top: out of the bins
      } else if (fast) {
        add(start, end - start);
      } else {
        for (auto c = it; c != run_end; ++c) add(c->addr, c->size);
      }
      it = run_end;
    }
  }
  // systrim(0): main_arena's top, when it is the end of one brk area.
  const uint64_t top_end = w.top + w.top_size;
  const bool contiguous = !w.heaps.empty() && w.heaps.back().walkable;
  if (w.main && contiguous && w.top_size > 0 && top_end - top_start > kMinSize + 1) {
    const uint64_t unit = thp_page_size ? thp_page_size : page_size;
    const uint64_t extra = (top_end - top_start - kMinSize - 1) / unit * unit;
    if (extra > 0) out.push_back({top_end - extra, top_end});
  }
  std::sort(out.begin(), out.end(), [](const residency::PageRange& a, const residency::PageRange& b) {
    return a.start < b.start;
  });
  return out;
}

}  // namespace pageblame::heap

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
  // A run of free chunks, one after the other in a heap walked whole (every
  // free chunk has a record; any chunk between two records breaks the run):
  // with a fastbin chunk in it, consolidation makes it one chunk.
  uint64_t run_start = 0, run_end = 0;
  bool fast = false;
  std::vector<std::pair<uint64_t, uint64_t>> run;  // its chunks
  auto close = [&] {
    if (run.empty()) return;
    if (fast && run_end == w.top) {
      top_start = run_start;  // merged into top: out of the bins
    } else if (fast) {
      add(run_start, run_end - run_start);
    } else {
      for (const auto& [p, size] : run) add(p, size);
    }
    run.clear();
    fast = false;
  };
  size_t heap = 0;
  w.ForEachNoted([&](const WalkedChunk& c) {
    while (heap < w.heaps.size() && w.heaps[heap].chunks_end <= c.addr()) ++heap;
    const bool in_walked_heap = heap < w.heaps.size() && w.heaps[heap].complete &&
                                c.addr() >= w.heaps[heap].chunks_start;
    const bool free = c.state() == ChunkState::kBinned || c.state() == ChunkState::kFast;
    if (!free || !in_walked_heap || (!run.empty() && c.addr() != run_end)) close();
    if (!free || !in_walked_heap) return;
    if (run.empty()) run_start = c.addr();
    run.push_back({c.addr(), c.size()});
    run_end = c.addr() + c.size();
    fast |= c.state() == ChunkState::kFast;
  });
  close();
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

// The in-use / free split of arena pages (heap_split.h) on hand-made heap
// snapshots and versions: free ranges cut at region bounds, only committed
// bytes of arena kinds that existed at the snapshot split, unknown without
// a snapshot or for arena bytes made after it; sums as AddRss sums.
#include "processor/analysis/heap_split.h"

#include <sys/mman.h>

#include "gtest/gtest.h"

namespace pageblame::analysis {
namespace {

constexpr uint64_t kBase = 0x10000;

heap::HeapSnapshot Snapshot(uint64_t time) {
  heap::HeapSnapshot s;
  s.pid = 7;
  s.time = time;
  s.arenas.resize(1);
  // Sorted and disjoint, as the walker makes them: a binned chunk, a tcache
  // entry, then top to the end of the heap.
  s.free_ranges = {{kBase + 0x100, kBase + 0x300, 0, heap::FreeKind::kBin},
                   {kBase + 0x1000, kBase + 0x1040, 0, heap::FreeKind::kTcache},
                   {kBase + 0x3000, kBase + 0x8000, 0, heap::FreeKind::kTop}};
  return s;
}

index::Version Version(uint64_t start, uint64_t end, int prot, uint64_t t_from) {
  index::Version v;
  v.start = start;
  v.end = end;
  v.t_from = t_from;
  v.attrs.prot = prot;
  return v;
}

TEST(HeapSplitTest, FreeBytesAreTheFreeRangesInsideTheRange) {
  const heap::HeapSnapshot s = Snapshot(100);
  EXPECT_EQ(FreeBytesIn(s, kBase, kBase + 0x8000), 0x200u + 0x40 + 0x5000);
  EXPECT_EQ(FreeBytesIn(s, kBase, kBase + 0x1000), 0x200u);             // the bin chunk only
  EXPECT_EQ(FreeBytesIn(s, kBase + 0x200, kBase + 0x1020), 0x100u + 0x20);  // cut at both ends
  EXPECT_EQ(FreeBytesIn(s, kBase + 0x4000, kBase + 0x5000), 0x1000u);    // inside top
  EXPECT_EQ(FreeBytesIn(s, kBase + 0x8000, kBase + 0x9000), 0u);         // after every range
  EXPECT_EQ(FreeBytesIn(s, kBase + 0x1040, kBase + 0x3000), 0u);         // between ranges
}

TEST(HeapSplitTest, OnlyCommittedArenaBytesMadeBeforeTheSnapshotSplit) {
  const heap::HeapSnapshot s = Snapshot(100);
  const index::Version rw = Version(kBase, kBase + 0x8000, PROT_READ | PROT_WRITE, 50);
  // The whole heap: 0x5240 free, the rest in use.
  EXPECT_EQ(HeapView::Split(&s, RegionKind::kMalloc, rw, kBase, kBase + 0x8000),
            (HeapUse{0x8000 - 0x5240, 0x5240}));
  // The brk heap is an arena too.
  EXPECT_EQ(HeapView::Split(&s, RegionKind::kHeap, rw, kBase + 0x3000, kBase + 0x4000), (HeapUse{0, 0x1000}));
  // Not an arena, or PROT_NONE: known, nothing split.
  EXPECT_EQ(HeapView::Split(&s, RegionKind::kAnon, rw, kBase, kBase + 0x8000), (HeapUse{0, 0}));
  EXPECT_EQ(HeapView::Split(&s, RegionKind::kMalloc, Version(kBase, kBase + 0x8000, PROT_NONE, 50), kBase,
                            kBase + 0x8000),
            (HeapUse{0, 0}));
  // Arena bytes made after the snapshot: unknown, never 0 (a row of them
  // read "0 B in use"); PROT_NONE ones made then are still nothing to split.
  EXPECT_FALSE(HeapView::Split(&s, RegionKind::kMalloc, Version(kBase, kBase + 0x8000, PROT_READ, 101), kBase,
                               kBase + 0x8000)
                   .has_value());
  EXPECT_EQ(HeapView::Split(&s, RegionKind::kMalloc, Version(kBase, kBase + 0x8000, PROT_NONE, 101), kBase,
                            kBase + 0x8000),
            (HeapUse{0, 0}));
  // No snapshot: unknown, never 0.
  EXPECT_FALSE(HeapView::Split(nullptr, RegionKind::kMalloc, rw, kBase, kBase + 0x8000).has_value());
  EXPECT_FALSE(HeapView::Split(&s, std::nullopt, rw, kBase, kBase + 0x8000)->free);
}

TEST(HeapSplitTest, SumsKeepTheKnownPart) {
  std::optional<HeapUse> sum;
  AddHeapUse(&sum, std::nullopt);
  EXPECT_FALSE(sum.has_value());
  AddHeapUse(&sum, HeapUse{10, 5});
  AddHeapUse(&sum, std::nullopt);
  AddHeapUse(&sum, HeapUse{1, 2});
  EXPECT_EQ(sum, (HeapUse{11, 7}));
  EXPECT_TRUE(ArenaKind(RegionKind::kMalloc));
  EXPECT_TRUE(ArenaKind(RegionKind::kHeap));
  EXPECT_FALSE(ArenaKind(RegionKind::kThreadStack));
  EXPECT_FALSE(ArenaKind(std::nullopt));
}

}  // namespace
}  // namespace pageblame::analysis

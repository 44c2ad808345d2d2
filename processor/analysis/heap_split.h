// HeapSplit: the bytes of malloc arena pages credited to a stack, split into
// bytes in live chunks and bytes glibc holds free, from the heap snapshot
// `record` took of the process (heap/heap_index.h, TRACE.heap).
//
//   HeapView heap(session.heap(), idx);
//   const heap::HeapSnapshot* s = heap.SnapshotFor(process, at, ResidentView(session.residency(), idx));
//   std::optional<HeapUse> u = HeapView::Split(s, kind, v, start, end);
//   // u->free: the bytes of [start, end) inside free chunks, fastbins,
//   // tcache entries or top; u->in_use: the rest of its committed bytes
//
// What a syscall recording can know inside an arena: which call made each
// page usable (brk, mmap, mprotect of a thread heap), not which malloc owns
// a chunk on it: later mallocs reuse freed chunks without a syscall. So the
// split says how much of the pages a stack made is in use or free at the
// snapshot, not that the stack's own mallocs are the ones using it.
//
// Only committed bytes of versions of kind malloc or heap are split. A
// version begun after the snapshot is not known: unknown (nullopt), as
// without a snapshot, never 0 (a row of such pages read "0 B in use"). An
// mmapped chunk (kind malloc, outside every arena) has no free range: in use
// while mapped.
#ifndef PAGEBLAME_ANALYSIS_HEAP_SPLIT_H_
#define PAGEBLAME_ANALYSIS_HEAP_SPLIT_H_

#include <cstdint>
#include <optional>

#include "processor/analysis/region_kind.h"
#include "processor/heap/heap_index.h"
#include "processor/analysis/resident_view.h"
#include "processor/index/trace_index.h"

namespace pageblame::analysis {

struct HeapUse {
  uint64_t in_use = 0;
  uint64_t free = 0;
  bool operator==(const HeapUse& o) const { return in_use == o.in_use && free == o.free; }
};

// Adds a split to a sum: unknown + known is the known part, as AddRss.
inline void AddHeapUse(std::optional<HeapUse>* sum, const std::optional<HeapUse>& u) {
  if (!u) return;
  if (!*sum) sum->emplace();
  (*sum)->in_use += u->in_use;
  (*sum)->free += u->free;
}

// Whether a kind's pages are malloc's: its arenas (kMalloc: thread heaps
// and mmapped chunks; kHeap: the brk heap of main_arena).
inline bool ArenaKind(std::optional<RegionKind> k) { return k == RegionKind::kMalloc || k == RegionKind::kHeap; }

// Bytes of `s`'s free ranges (free chunks, fastbins, tcache, top) inside
// [start, end); O(log n + k).
uint64_t FreeBytesIn(const heap::HeapSnapshot& s, uint64_t start, uint64_t end);

class HeapView {
 public:
  // `heap` may be null (no TRACE.heap): every split is unknown.
  HeapView(const heap::HeapIndex* heap, const index::TraceIndex& idx) : heap_(heap), idx_(idx) {}
  bool has_snapshots() const { return heap_ != nullptr && heap_->size() > 0; }
  // The latest snapshot of the process entry's pid at or before `at`, taken
  // while that entry lived (a reused pid's are not mixed); null if none.
  const heap::HeapSnapshot* SnapshotFor(uint32_t process, uint64_t at) const;
  // The same, paired with the residency snapshot that speaks for `at`
  // (`rss`): record walks the heaps of a moment just after its residency
  // snapshots, so the walk of that moment is stamped a little later than
  // it; when the latest heap snapshot at or before `at` is older than that
  // residency snapshot, the walk of the residency snapshot's moment (the
  // pid's first heap snapshot after it, before its next residency snapshot)
  // speaks for `at` instead. E.g. --at the time of a requested residency
  // snapshot gets the heap as walked then, not the one walked 0.5 s before.
  const heap::HeapSnapshot* SnapshotFor(uint32_t process, uint64_t at, const ResidentView& rss) const;
  // The split of [start, end) of version `v` of kind `kind`; nullopt when
  // there is no snapshot or the version is of an arena kind, committed and
  // begun after it; {0, 0} for bytes it does not split (another kind,
  // PROT_NONE).
  static std::optional<HeapUse> Split(const heap::HeapSnapshot* s, std::optional<RegionKind> kind,
                                      const index::Version& v, uint64_t start, uint64_t end);

 private:
  const heap::HeapIndex* heap_;
  const index::TraceIndex& idx_;
};

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_HEAP_SPLIT_H_

#include "processor/analysis/address_strip.h"

#include <utility>

#include "processor/analysis/region_label.h"
#include "processor/analysis/resident_view.h"
#include "processor/analysis/syscall_format.h"

namespace pageblame::analysis {
namespace {

// Whether `b` (right after `a`) was made by the same stack, or both before the trace.
bool SameCreator(const index::TraceIndex& idx, const index::Version& a, const index::Version& b) {
  if (a.origin.valid() != b.origin.valid()) return false;
  return !a.origin.valid() || idx.event(a.origin).stack == idx.event(b.origin).stack;
}

bool Alike(const index::TraceIndex& idx, const index::Version& a, const StripRun& run, const index::Version& b,
           const StripRun& next) {
  return run.end == b.start && SameCreator(idx, a, b) && run.prot == next.prot && run.label == next.label &&
         run.kind == next.kind;
}

StripRun RunOf(const index::TraceIndex& idx, size_t i, const index::Version& v,
               const residency::ResidencySnapshot* snapshot, const heap::HeapSnapshot* heap,
               const KindFunction& kind_of) {
  StripRun r;
  r.first = i;
  r.count = 1;
  r.end = v.end;
  r.bytes = v.end - v.start;
  r.kind = kind_of(v);
  r.prot = RegionProt(v.attrs);
  r.label = RegionLabel(idx, v);
  r.rss = ResidentView::Bytes(snapshot, v.start, v.end);
  // Only arena kinds carry a split (the others' would be {0, 0}).
  if (ArenaKind(r.kind)) r.heap = HeapView::Split(heap, r.kind, v, v.start, v.end);
  return r;
}

}  // namespace

std::vector<StripRun> AddressStrip(const index::TraceIndex& idx, uint32_t p, uint64_t at,
                                   const std::vector<VersionId>& alive,
                                   const residency::ResidencySnapshot* snapshot, const heap::HeapSnapshot* heap,
                                   const KindFunction& kind_of, size_t max_regions) {
  const bool merge = alive.size() > max_regions;
  std::vector<StripRun> out;
  for (size_t i = 0; i < alive.size(); ++i) {
    const index::Version& v = idx.version(alive[i]);
    StripRun next = RunOf(idx, i, v, snapshot, heap, kind_of);
    if (merge && !out.empty()) {
      StripRun& cur = out.back();
      if (Alike(idx, idx.version(alive[cur.first]), cur, v, next)) {
        cur.end = v.end;
        cur.bytes += next.bytes;
        AddRss(&cur.rss, next.rss);
        AddHeapUse(&cur.heap, next.heap);
        ++cur.count;
        continue;
      }
    }
    out.push_back(std::move(next));
  }
  for (StripRun& r : out) r.lineage = PageLineage(idx, p, idx.version(alive[r.first]).start, at);
  return out;
}

}  // namespace pageblame::analysis

#include "processor/analysis/maps_answer.h"

#include <algorithm>

#include "processor/analysis/heap_split.h"
#include "processor/analysis/resident_view.h"

namespace pageblame::analysis {
namespace {

bool Wanted(const MapsQuery& q, RegionKind k) {
  return q.kinds.empty() || std::find(q.kinds.begin(), q.kinds.end(), k) != q.kinds.end();
}

ProcessMaps ProcessAt(const index::TraceIndex& idx, const ResidentView& view, const HeapView& heap,
                      const MapsQuery& q, uint32_t p) {
  ProcessMaps out;
  out.process = p;
  out.snapshot = view.SnapshotFor(p, q.at);
  out.heap_snapshot = heap.SnapshotFor(p, q.at, view);
  for (VersionId id : idx.RegionsAt(p, q.at)) {
    const index::Version& v = idx.version(id);
    const RegionKind kind = q.kind_of(v);
    if (!Wanted(q, kind)) continue;
    const std::optional<uint64_t> rss = ResidentView::Bytes(out.snapshot, v.start, v.end);
    out.regions.push_back(MapsRegion{id, kind, rss, HeapView::Split(out.heap_snapshot, kind, v, v.start, v.end)});
    (v.origin.valid() ? out.created_bytes : out.before_trace_bytes) += v.end - v.start;
    AddRss(&out.rss, rss);
  }
  if (q.runs) out.runs = RegionRuns(idx, out.regions, q.split);
  return out;
}

}  // namespace

MapsAnswer Maps(const index::TraceIndex& idx, const MapsQuery& query) {
  const ResidentView view(query.rss, idx);
  MapsAnswer out;
  out.at = query.at;
  out.split = query.split;
  out.snapshots = view.has_snapshots();
  const HeapView heap(query.heap, idx);
  for (uint32_t p : query.processes) out.processes.push_back(ProcessAt(idx, view, heap, query, p));
  return out;
}

}  // namespace pageblame::analysis

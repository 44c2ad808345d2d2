#include "processor/analysis/report_analysis.h"

#include <algorithm>

#include "processor/analysis/resident_view.h"

namespace pageblame::analysis {

ReportAnalysis AnalyzeReport(const index::TraceIndex& idx, const ReportQuery& q) {
  ReportAnalysis out;
  out.process = q.process;
  out.at = q.at;
  out.timeline = ComputeStackTimeline(idx, q.process, std::max<size_t>(q.buckets, 1), q.series_stacks, q.kind_of);
  std::vector<StackId> series;
  for (const StackSeries& s : out.timeline.stacks) series.push_back(idx.event(s.first_call).stack);
  const ResidentView view(q.rss, idx);
  out.resident = ComputeResidentTimeline(idx, view, q.process, series, std::max<size_t>(q.buckets, 2));
  out.snapshots = view.has_snapshots();
  out.strip_snapshot = view.SnapshotFor(q.process, q.at);
  out.alive = idx.RegionsAt(q.process, q.at);
  out.live = LiveStacks(idx, out.alive);
  out.heap_snapshot = HeapView(q.heap, idx).SnapshotFor(q.process, q.at);
  out.strip = AddressStrip(idx, q.process, q.at, out.alive, out.strip_snapshot, out.heap_snapshot, q.kind_of,
                           q.max_strip_regions);
  return out;
}

}  // namespace pageblame::analysis

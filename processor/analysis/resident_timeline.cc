#include "processor/analysis/resident_timeline.h"

#include <map>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace pageblame::analysis {
namespace {

// The snapshots that speak for the process entry (SnapshotFor's rule: not
// an earlier process's with a reused pid; not before a thinned index's
// cut), by time; at most max_points of
// them, evenly spaced, the last always kept.
std::vector<const residency::ResidencySnapshot*> PointsOf(const index::TraceIndex& idx,
                                                          const ResidentView& view, uint32_t process,
                                                          size_t max_points) {
  std::vector<const residency::ResidencySnapshot*> all;
  if (!view.has_snapshots()) return all;
  for (const residency::ResidencySnapshot& s : view.index()->Of(idx.process(process).pid)) {
    // Not before the cut of a thinned index: no whole state there to split it by.
    if (s.time < idx.stats().thinned_before) continue;
    if (view.SnapshotFor(process, s.time) == &s) all.push_back(&s);
  }
  if (all.size() <= max_points || max_points < 2) return all;
  std::vector<const residency::ResidencySnapshot*> kept;
  for (size_t i = 0; i < max_points; ++i) kept.push_back(all[i * (all.size() - 1) / (max_points - 1)]);
  return kept;
}

}  // namespace

std::optional<ResidentTimeline> ComputeResidentTimeline(const index::TraceIndex& idx, const ResidentView& view,
                                                        uint32_t process, const std::vector<StackId>& series_stacks,
                                                        size_t max_points) {
  const std::vector<const residency::ResidencySnapshot*> points = PointsOf(idx, view, process, max_points);
  if (points.empty()) return std::nullopt;
  absl::flat_hash_map<StackId, int> named;
  for (size_t i = 0; i < series_stacks.size(); ++i) named.try_emplace(series_stacks[i], static_cast<int>(i));
  constexpr int kOther = -2;  // stacks without a series: the page's "other"
  // Stack place (or -1, kOther) -> bytes per point; ordered: deterministic.
  std::map<int, std::vector<uint64_t>> by_stack;
  ResidentTimeline out;
  for (size_t k = 0; k < points.size(); ++k) {
    const residency::ResidencySnapshot* s = points[k];
    uint64_t sum = 0;
    for (VersionId id : idx.RegionsAt(process, s->time)) {
      const index::Version& v = idx.version(id);
      const std::optional<uint64_t> bytes = ResidentView::Bytes(s, v.start, v.end);
      if (!bytes || *bytes == 0) continue;
      int stack = -1;
      if (v.origin.valid()) {
        auto it = named.find(idx.event(v.origin).stack);
        stack = it == named.end() ? kOther : it->second;
      }
      std::vector<uint64_t>& row = by_stack[stack];
      row.resize(points.size(), 0);
      row[k] += *bytes;
      sum += *bytes;
    }
    out.times.push_back(s->time);
    out.total.push_back(sum);
  }
  for (auto& [stack, bytes] : by_stack) {
    if (stack == kOther) continue;  // the page draws total minus the series
    out.series.push_back(ResidentSeries{stack, std::move(bytes)});
  }
  return out;
}

}  // namespace pageblame::analysis

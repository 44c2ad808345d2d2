#include "processor/analysis/region_runs.h"

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "processor/analysis/kind_tally.h"
#include "processor/analysis/resident_view.h"

namespace pageblame::analysis {
namespace {

// Whether the kernel would have merged b into the VMA that a ends (see the
// header; docs: text `maps` merges them).
bool SameRun(const index::TraceIndex& idx, const index::Version& a, const index::Version& b) {
  if (a.end != b.start || a.attrs.prot != b.attrs.prot || a.attrs.path != b.attrs.path) return false;
  if (a.origin.valid() != b.origin.valid()) return false;
  std::string_view path = idx.strings().Get(a.attrs.path);
  if (path == "[heap]") return true;
  if (!path.empty()) return a.attrs.pgoff + (a.end - a.start) == b.attrs.pgoff;
  if (!a.origin.valid()) return true;
  return idx.event(a.origin).stack == idx.event(b.origin).stack;
}

RunCalls CallsOf(const index::TraceIndex& idx, const std::vector<MapsRegion>& regions, const RegionRun& run,
                 bool commit) {
  absl::flat_hash_map<EventId, uint64_t> bytes;
  absl::flat_hash_set<StackId> stacks;
  for (size_t i = run.first; i < run.first + run.count; ++i) {
    const index::Version& v = idx.version(regions[i].version);
    const EventId ev = commit ? v.commit : v.origin;
    if (!ev.valid()) continue;
    bytes[ev] += v.end - v.start;
    stacks.insert(idx.event(ev).stack);
  }
  RunCalls out;
  out.calls = bytes.size();
  out.stacks = stacks.size();
  uint64_t most = 0;
  for (const auto& [ev, n] : bytes) {
    if (!out.top.valid() || n > most || (n == most && ev < out.top)) {
      out.top = ev;
      most = n;
    }
  }
  return out;
}

// Its kind, resident bytes and calls, once its regions are known.
void Describe(const index::TraceIndex& idx, const std::vector<MapsRegion>& regions, RegionRun* run) {
  KindTally tally;
  for (size_t i = run->first; i < run->first + run->count; ++i) {
    const index::Version& v = idx.version(regions[i].version);
    tally.Add(regions[i].kind, v.end - v.start);
    AddRss(&run->rss, regions[i].rss);
  }
  run->kind = tally.Dominant();
  run->origin = CallsOf(idx, regions, *run, /*commit=*/false);
  run->commit = CallsOf(idx, regions, *run, /*commit=*/true);
}

}  // namespace

std::vector<RegionRun> RegionRuns(const index::TraceIndex& idx, const std::vector<MapsRegion>& regions, bool split) {
  std::vector<RegionRun> runs;
  for (size_t i = 0; i < regions.size(); ++i) {
    const index::Version& v = idx.version(regions[i].version);
    if (split || runs.empty() || !SameRun(idx, idx.version(regions[i - 1].version), v)) {
      runs.push_back(RegionRun{i, 0, v.start, v.end, std::nullopt, std::nullopt, {}, {}});
    }
    ++runs.back().count;
    runs.back().end = v.end;
  }
  for (RegionRun& run : runs) Describe(idx, regions, &run);
  return runs;
}

}  // namespace pageblame::analysis

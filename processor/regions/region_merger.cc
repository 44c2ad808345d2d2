#include "processor/regions/region_merger.h"

#include <algorithm>
#include <tuple>
#include <utility>

namespace pageblame::regions {
namespace {

// Rows (sorted by start) [first, last) that form one merged region.
struct Group {
  size_t first, last;
  uint64_t start, end;
};

std::vector<Group> Groups(const std::vector<const Region*>& sorted) {
  std::vector<Group> groups;
  for (size_t i = 0; i < sorted.size(); ++i) {
    const Region& r = *sorted[i];
    // Strictly inside the group's span: touching rows stay apart.
    if (!groups.empty() && r.start < groups.back().end) {
      groups.back().last = i + 1;
      groups.back().end = std::max(groups.back().end, r.end);
    } else {
      groups.push_back({i, i + 1, r.start, r.end});
    }
  }
  return groups;
}

// Bytes of a group's span covered by two or more of its rows: a sweep over
// the row bounds, ends before starts at the same address (half-open rows).
uint64_t OverlapBytes(const std::vector<const Region*>& sorted, const Group& g) {
  std::vector<std::pair<uint64_t, int>> bounds;
  for (size_t i = g.first; i < g.last; ++i) {
    bounds.push_back({sorted[i]->start, +1});
    bounds.push_back({sorted[i]->end, -1});
  }
  std::sort(bounds.begin(), bounds.end());
  uint64_t bytes = 0, at = 0;
  int depth = 0;
  for (const auto& [address, step] : bounds) {
    if (depth >= 2) bytes += address - at;  // at most the group's span: no wrap
    at = address;
    depth += step;
  }
  return bytes;
}

Region MergeGroup(const std::vector<const Region*>& sorted, const Group& g) {
  const Region* earliest = sorted[g.first];
  std::vector<int> lines;
  for (size_t i = g.first; i < g.last; ++i) {
    lines.push_back(sorted[i]->line);
    if (sorted[i]->line < earliest->line) earliest = sorted[i];
  }
  Region out = *earliest;
  out.start = g.start;
  out.end = g.end;
  // The rows' Rss counts the shared bytes more than once: the union's is unknown.
  out.rss.reset();
  std::sort(lines.begin(), lines.end());
  lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
  lines.erase(std::find(lines.begin(), lines.end(), earliest->line));
  for (int l : earliest->merged_lines) lines.push_back(l);
  std::sort(lines.begin(), lines.end());
  out.merged_lines = std::move(lines);
  return out;
}

}  // namespace

MergedRegions RegionMerger::Merge(absl::Span<const Region> rows) {
  std::vector<const Region*> sorted;
  for (const Region& r : rows)
    if (r.end > r.start) sorted.push_back(&r);
  std::sort(sorted.begin(), sorted.end(), [](const Region* a, const Region* b) {
    return std::tie(a->start, a->line) < std::tie(b->start, b->line);
  });
  MergedRegions out;
  std::vector<std::pair<const Region*, Region>> by_first_row;  // (first row in `rows`, merged)
  for (const Group& g : Groups(sorted)) {
    const Region* first_row = *std::min_element(sorted.begin() + g.first, sorted.begin() + g.last);
    if (g.last - g.first == 1) {
      by_first_row.push_back({first_row, *first_row});
      continue;
    }
    by_first_row.push_back({first_row, MergeGroup(sorted, g)});
    out.overlap_bytes += OverlapBytes(sorted, g);
    out.overlapping_rows += static_cast<int>(g.last - g.first);
    ++out.merged_regions;
  }
  // Pointers into one span compare as positions in it.
  std::sort(by_first_row.begin(), by_first_row.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [row, region] : by_first_row) out.regions.push_back(std::move(region));
  return out;
}

}  // namespace pageblame::regions

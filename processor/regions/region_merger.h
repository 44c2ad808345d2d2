// RegionMerger: makes a table's rows disjoint before their bytes are added
// up (`pageblame attribute --regions`), so a byte listed by two rows counts
// once and no total can pass 2^64.
//
//   MergedRegions m = RegionMerger::Merge(table.regions);
//   // m.regions: disjoint; m.overlap_bytes: bytes that more than one row listed
//
// Rule (the same arithmetic as the page diff: exact bounds, so page-exact):
// rows that share at least one byte, directly or through a chain of rows,
// become one region spanning them all. Rows that only touch (one ends where
// the next starts, as every maps file's rows do) stay separate. A merged
// region keeps the descriptive columns (type, state, protect, usage) and
// `line` of its earliest source line, and lists the other lines in
// `merged_lines`; its rss is unset (the rows' Rss would count shared bytes
// twice). Regions come out in the order of their first row in the
// input, so a table without overlaps comes out unchanged, in its own order.
//
// Cost: O(n log n) for n rows.
#ifndef PAGEBLAME_REGIONS_REGION_MERGER_H_
#define PAGEBLAME_REGIONS_REGION_MERGER_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "processor/regions/region.h"

namespace pageblame::regions {

struct MergedRegions {
  std::vector<Region> regions;  // disjoint, in the order of their first row
  // Bytes inside two or more rows (each such byte counted once): the
  // over-count a plain sum of the rows' sizes would have (at least).
  uint64_t overlap_bytes = 0;
  int overlapping_rows = 0;  // rows that share a byte with another row
  int merged_regions = 0;    // regions made of more than one row
};

class RegionMerger {
 public:
  static MergedRegions Merge(absl::Span<const Region> rows);
};

}  // namespace pageblame::regions

#endif  // PAGEBLAME_REGIONS_REGION_MERGER_H_

// A region's creating (or committing) calls grouped by stack: `attribute
// --detail` prints one line per stack, so a loop that mapped 20 pages of a
// region is one line, not 20.
//
//   std::vector<std::vector<RegionStack>> by_region = RegionStacks(idx, a);
//   by_region[i];  // a.regions[i]'s stacks, most bytes first
//
// One vector per Attribution::regions entry, in that order. Within a region:
// bytes descending; equal bytes in the order of their first call in
// RegionAttribution::calls.
#ifndef PAGEBLAME_ANALYSIS_REGION_STACKS_H_
#define PAGEBLAME_ANALYSIS_REGION_STACKS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "processor/analysis/attribute_report.h"
#include "processor/index/trace_index.h"

namespace pageblame::analysis {

struct RegionStack {
  // 1-based position of the stack in Attribution::stacks (the rank the text
  // prints); 0 only if the stack is not there, which Attribute() never gives.
  size_t rank = 0;
  uint64_t bytes = 0;  // of the region, by this stack's calls
  uint32_t calls = 0;  // its calls with bytes in the region
  EventId first;       // the earliest of them
};

std::vector<std::vector<RegionStack>> RegionStacks(const index::TraceIndex& idx, const Attribution& a);

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_REGION_STACKS_H_

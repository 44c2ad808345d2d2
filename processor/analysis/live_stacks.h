// The bytes of an address space by creating stack, for the report's flame
// graph of live bytes (render/report_data.h).
//
//   std::vector<LiveStack> live = LiveStacks(idx, idx.RegionsAt(p, at));
//
// One row per creating stack (its calls' StackId) and one for the versions
// from before the trace, in the order of their first version in `alive`;
// first_call is that version's creating call. Sums over `alive`:
// sum(bytes) is its mapped bytes, sum(committed) its committed bytes.
#ifndef PAGEBLAME_ANALYSIS_LIVE_STACKS_H_
#define PAGEBLAME_ANALYSIS_LIVE_STACKS_H_

#include <cstdint>
#include <vector>

#include "processor/index/trace_index.h"

namespace pageblame::analysis {

struct LiveStack {
  EventId first_call;  // invalid: versions from before the trace
  uint64_t bytes = 0;
  uint64_t committed = 0;
};

std::vector<LiveStack> LiveStacks(const index::TraceIndex& idx, const std::vector<VersionId>& alive);

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_LIVE_STACKS_H_

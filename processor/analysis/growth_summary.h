// Counts and totals over a Growth that its text shows beside the per-stack
// rows (the first table's total): computed once here.
//
//   GrowthSummary s = SummarizeGrowth(g);
//   s.committed_stacks;   // the stacks the text's table ranks
//   s.stacks_to.committed == g.total_to.committed - g.before_to.committed
#ifndef PAGEBLAME_ANALYSIS_GROWTH_SUMMARY_H_
#define PAGEBLAME_ANALYSIS_GROWTH_SUMMARY_H_

#include <cstddef>
#include <cstdint>

#include "processor/analysis/growth_report.h"

namespace pageblame::analysis {

struct GrowthSummary {
  size_t committed_stacks = 0;  // stacks with committed bytes at either end
  uint64_t committed_calls = 0;  // the calls of those stacks
  // What the stacks hold at each end: the total minus what is from before
  // the trace. rss is unknown where the total's is; an unknown before-trace
  // rss counts 0.
  BytesAt stacks_from, stacks_to;
};

GrowthSummary SummarizeGrowth(const Growth& g);

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_GROWTH_SUMMARY_H_

// Counts and totals over an Attribution that its renderers show beside the
// per-stack rows (the text's header and table total, the pprof pseudo
// stacks): computed once here, so every output says the same numbers.
//
//   AttributionSummary s = SummarizeAttribution(a);
//   s.calls;              // sum of a.stacks[i].calls
//   s.committed_stacks;   // the stacks the text's table ranks
#ifndef PAGEBLAME_ANALYSIS_ATTRIBUTION_SUMMARY_H_
#define PAGEBLAME_ANALYSIS_ATTRIBUTION_SUMMARY_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "processor/analysis/attribute_report.h"

namespace pageblame::analysis {

struct AttributionSummary {
  uint64_t calls = 0;               // credited calls of every stack
  size_t committed_stacks = 0;      // stacks with committed bytes
  size_t committed_regions = 0;     // regions a call made committed bytes of
  size_t before_trace_regions = 0;  // regions with bytes from before the trace
  size_t unmapped_regions = 0;      // regions with bytes not mapped at `at`
  // Resident bytes credited to stacks (Attribution::rss also counts those
  // from before the trace); unknown if no stack's are known.
  std::optional<uint64_t> stacks_rss;
};

AttributionSummary SummarizeAttribution(const Attribution& a);

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_ATTRIBUTION_SUMMARY_H_

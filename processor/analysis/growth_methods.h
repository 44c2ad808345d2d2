// A Growth's stacks grouped by the application method they are blamed on
// (method_groups.h), with each method's totals: what the first screen of
// `growth` shows, one row per method, and its JSON "methods".
//
//   std::vector<MethodGrowth> m = GrowthByMethod(session.frames(), g, summary_options);
//   m[0].total.committed_growth();   // the sum of its stacks'
//
// A method's totals are its stacks' sums (AddBytesAt at both ends: resident
// bytes known where every stack's are; added, removed, made_gone, calls,
// kinds); total.stack and total.first_call are its top stack's.
//
// Order: as Growth::stacks are ranked (GrowthOptions::rank_by), except that
// unless the ranking is by resident growth (with snapshots), a method whose
// memory is mostly thread stacks or reservations ranks after every other
// (attribution_methods.h says why). Then committed growth, growth, bytes at
// `to`, and the top stack's place.
#ifndef PAGEBLAME_ANALYSIS_GROWTH_METHODS_H_
#define PAGEBLAME_ANALYSIS_GROWTH_METHODS_H_

#include <vector>

#include "processor/analysis/growth_report.h"
#include "processor/analysis/method_groups.h"
#include "processor/session/stack_frames.h"

namespace pageblame::analysis {

struct MethodGrowth {
  MethodGroup group;
  StackGrowth total;
};

std::vector<MethodGrowth> GrowthByMethod(session::StackFrames& frames, const Growth& g, const SummaryOptions& options);

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_GROWTH_METHODS_H_

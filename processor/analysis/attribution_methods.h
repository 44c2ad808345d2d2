// An Attribution's stacks grouped by the application method they are
// blamed on (method_groups.h), with each method's totals: what the first
// screen of `attribute` shows, one row per method, and its JSON "methods".
//
//   std::vector<MethodTotal> m = AttributionByMethod(session.frames(), a, summary_options);
//   m[0].group.method.name;   // "Program::LeakNativeMemory"
//   m[0].total.committed;     // the sum of its stacks' committed bytes
//
// A method's totals are its stacks' sums: bytes, committed, rss (unknown
// only if every stack's is), calls, kinds; `regions` counts a region its
// stacks share once, and table_rss is StackTotal's for the method's bytes
// of each region. total.stack and total.first_call are its top stack's.
//
// Order: as Attribution::stacks are ranked (AttributeOptions::rank_by:
// resident, committed or mapped bytes, descending), except that unless the
// ranking is by resident bytes a snapshot read, a method whose memory is
// mostly thread stacks or reservations ranks after every other: their
// committed bytes are mostly bytes nobody touched (an 8 MiB thread stack
// uses a few pages), and they must not push the leaks off the first
// screen. Then committed, bytes, and the top stack's place.
#ifndef PAGEBLAME_ANALYSIS_ATTRIBUTION_METHODS_H_
#define PAGEBLAME_ANALYSIS_ATTRIBUTION_METHODS_H_

#include <optional>
#include <vector>

#include "processor/analysis/attribute_report.h"
#include "processor/analysis/method_groups.h"
#include "processor/session/stack_frames.h"

namespace pageblame::analysis {

struct MethodTotal {
  MethodGroup group;
  StackTotal total;
};

std::vector<MethodTotal> AttributionByMethod(session::StackFrames& frames, const Attribution& a,
                                             const SummaryOptions& options);

// Thread stacks and reservations: memory whose committed size says little
// of what is used (the rankings above put them last unless by resident bytes).
bool MostlyUntouched(std::optional<RegionKind> kind);

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_ATTRIBUTION_METHODS_H_

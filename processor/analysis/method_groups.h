// The stacks of an answer grouped by the application method they are
// blamed on (app_method.h): the step between the per-stack results of
// `attribute` and `growth` and their first screens, one row per method
// (attribution_methods.h, growth_methods.h add up each group's totals).
//
//   std::vector<EventId> firsts = {a.stacks[0].first_call, ...};
//   std::vector<MethodGroup> g = GroupByMethod(session.frames(), firsts, summary_options);
//   g[0].stacks;   // {0, 3, 7}: the stacks of the method of stack 0
//
// Groups come in the order of their first stack; each group's stacks keep
// the answer's order (its first is its top stack, whose context the group
// says). Every stack is in exactly one group. Cost: each stack symbolized
// once (the session's cache).
#ifndef PAGEBLAME_ANALYSIS_METHOD_GROUPS_H_
#define PAGEBLAME_ANALYSIS_METHOD_GROUPS_H_

#include <cstddef>
#include <vector>

#include "absl/types/span.h"
#include "processor/analysis/app_frames.h"
#include "processor/analysis/app_method.h"
#include "processor/index/trace_index.h"
#include "processor/session/stack_frames.h"

namespace pageblame::analysis {

// --group: one row per method (the first screens' default) or per stack.
enum class GroupBy { kMethod, kStack };

struct MethodGroup {
  AppMethod method;            // its name, and the context of its first stack
  std::vector<size_t> stacks;  // indexes into the answer's stacks, ascending
};

// `first_calls[i]`: stack i's representative call (StackTotal::first_call,
// StackGrowth::first_call), whose frames in its process name the method.
std::vector<MethodGroup> GroupByMethod(session::StackFrames& frames, absl::Span<const EventId> first_calls,
                                       const SummaryOptions& options);

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_METHOD_GROUPS_H_

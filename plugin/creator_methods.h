// The regions a plugin summary answers for, grouped by the application
// method whose call created them (analysis/method_groups.h: the grouping
// and the one app-frame rule of `attribute`'s first screen), with each
// method's totals: the last section of the text summary (docs/plugin.md).
//
//   std::vector<CreatorMethod> m = CreatorsByMethod(session.frames(), {v1, v2, v3});
//   m[0].group.method.name;   // "Program::MapAndKeep"
//   m[0].bytes;               // the sum of m[0].stacks[k].bytes
//
// Each region (version) counts once however many asked pages it holds;
// regions that existed before the trace (no creating call) are left out.
// A stack is a (process, call stack) pair: its frames are named in that
// process. A method's totals are the sums of its stacks'. Order: bytes
// descending, then the order of first appearance.
#ifndef PAGEBLAME_PLUGIN_CREATOR_METHODS_H_
#define PAGEBLAME_PLUGIN_CREATOR_METHODS_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "processor/analysis/method_groups.h"
#include "processor/session/stack_frames.h"

namespace pageblame::plugin {

struct CreatorStack {
  EventId first_call;  // the first answered region's creating call
  uint64_t bytes = 0;  // of its distinct regions
  uint64_t regions = 0;
};

struct CreatorMethod {
  analysis::MethodGroup group;       // group.stacks index `stacks` below
  std::vector<CreatorStack> stacks;  // this method's, in first-appearance order
  uint64_t bytes = 0;
  uint64_t regions = 0;
};

// `versions`: the answers' versions, in answer order (repeats and invalid
// ids allowed).
std::vector<CreatorMethod> CreatorsByMethod(session::StackFrames& frames, absl::Span<const VersionId> versions);

}  // namespace pageblame::plugin

#endif  // PAGEBLAME_PLUGIN_CREATOR_METHODS_H_

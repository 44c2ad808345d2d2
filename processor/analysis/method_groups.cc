#include "processor/analysis/method_groups.h"

#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace pageblame::analysis {

std::vector<MethodGroup> GroupByMethod(session::StackFrames& frames, absl::Span<const EventId> first_calls,
                                       const SummaryOptions& options) {
  const index::TraceIndex& idx = frames.index();
  std::vector<MethodGroup> out;
  // (app, name) -> index in out: a stack with no app frame is never
  // grouped with a method that prints the same.
  absl::flat_hash_map<std::pair<bool, std::string>, size_t> slot;
  for (size_t i = 0; i < first_calls.size(); ++i) {
    AppMethod m = MethodOf(frames.Frames(idx.event(first_calls[i])), options);
    auto [it, inserted] = slot.try_emplace(std::make_pair(m.app, m.name), out.size());
    if (inserted) out.push_back(MethodGroup{std::move(m), {}});
    out[it->second].stacks.push_back(i);
  }
  return out;
}

}  // namespace pageblame::analysis

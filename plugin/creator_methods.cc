#include "plugin/creator_methods.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace pageblame::plugin {
namespace {

// Each distinct creating (process, stack) and its regions' totals.
std::vector<CreatorStack> StacksOf(const index::TraceIndex& idx, absl::Span<const VersionId> versions) {
  std::vector<CreatorStack> out;
  absl::flat_hash_set<VersionId> seen;
  absl::flat_hash_map<std::pair<uint32_t, StackId>, size_t> slot;
  for (VersionId id : versions) {
    if (!id.valid() || !seen.insert(id).second) continue;
    const index::Version& v = idx.version(id);
    if (!v.origin.valid()) continue;  // existed before the trace
    const index::CallEvent& ev = idx.event(v.origin);
    auto [it, inserted] = slot.try_emplace(std::make_pair(v.process, ev.stack), out.size());
    if (inserted) out.push_back(CreatorStack{v.origin, 0, 0});
    out[it->second].bytes += v.end - v.start;
    ++out[it->second].regions;
  }
  return out;
}

}  // namespace

std::vector<CreatorMethod> CreatorsByMethod(session::StackFrames& frames, absl::Span<const VersionId> versions) {
  const std::vector<CreatorStack> stacks = StacksOf(frames.index(), versions);
  std::vector<EventId> firsts;
  for (const CreatorStack& s : stacks) firsts.push_back(s.first_call);
  std::vector<CreatorMethod> out;
  for (analysis::MethodGroup& g : analysis::GroupByMethod(frames, firsts, analysis::SummaryOptions())) {
    CreatorMethod m;
    for (size_t i = 0; i < g.stacks.size(); ++i) {
      const CreatorStack& s = stacks[g.stacks[i]];
      m.stacks.push_back(s);
      m.bytes += s.bytes;
      m.regions += s.regions;
      g.stacks[i] = i;
    }
    m.group = std::move(g);
    out.push_back(std::move(m));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const CreatorMethod& a, const CreatorMethod& b) { return a.bytes > b.bytes; });
  return out;
}

}  // namespace pageblame::plugin

#include "processor/analysis/region_stacks.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"

namespace pageblame::analysis {
namespace {

using Ranks = absl::flat_hash_map<StackId, size_t>;

std::vector<RegionStack> OneRegion(const index::TraceIndex& idx, const Ranks& ranks, const RegionAttribution& ra) {
  std::vector<RegionStack> groups;
  for (const CallBytes& c : ra.calls) {
    const auto rank = ranks.find(idx.event(c.call).stack);
    const size_t k = rank == ranks.end() ? 0 : rank->second;
    auto g = std::find_if(groups.begin(), groups.end(), [&](const RegionStack& x) { return x.rank == k; });
    if (g == groups.end()) g = groups.insert(groups.end(), RegionStack{k, 0, 0, c.call});
    g->bytes += c.bytes;
    ++g->calls;
    if (idx.event(c.call).time < idx.event(g->first).time) g->first = c.call;
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const RegionStack& x, const RegionStack& y) { return x.bytes > y.bytes; });
  return groups;
}

}  // namespace

std::vector<std::vector<RegionStack>> RegionStacks(const index::TraceIndex& idx, const Attribution& a) {
  Ranks ranks;
  for (size_t i = 0; i < a.stacks.size(); ++i) ranks[a.stacks[i].stack] = i + 1;
  std::vector<std::vector<RegionStack>> out;
  out.reserve(a.regions.size());
  for (const RegionAttribution& ra : a.regions) out.push_back(OneRegion(idx, ranks, ra));
  return out;
}

}  // namespace pageblame::analysis

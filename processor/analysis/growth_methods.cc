#include "processor/analysis/growth_methods.h"

#include <algorithm>
#include <tuple>

#include "processor/analysis/attribution_methods.h"

namespace pageblame::analysis {
namespace {

StackGrowth SumOf(const Growth& g, const MethodGroup& group) {
  StackGrowth t;
  const StackGrowth& top = g.stacks[group.stacks.front()];
  t.stack = top.stack;
  t.first_call = top.first_call;
  for (size_t i : group.stacks) {
    const StackGrowth& s = g.stacks[i];
    AddBytesAt(&t.from, s.from);
    AddBytesAt(&t.to, s.to);
    t.added += s.added;
    t.removed += s.removed;
    t.made_gone += s.made_gone;
    t.calls += s.calls;
    t.from_kinds.Add(s.from_kinds);
    t.to_kinds.Add(s.to_kinds);
  }
  return t;
}

}  // namespace

std::vector<MethodGrowth> GrowthByMethod(session::StackFrames& frames, const Growth& g, const SummaryOptions& options) {
  std::vector<EventId> firsts;
  firsts.reserve(g.stacks.size());
  for (const StackGrowth& s : g.stacks) firsts.push_back(s.first_call);
  std::vector<MethodGrowth> out;
  for (MethodGroup& group : GroupByMethod(frames, firsts, options)) {
    StackGrowth t = SumOf(g, group);
    out.push_back({std::move(group), std::move(t)});
  }
  const bool by_resident = g.rank_by == RankBy::kResident && g.snapshots;
  auto key = [&](const MethodGrowth& m) {
    const StackGrowth& s = m.total;
    // Resident growth with an unknown end counts that end as 0, as
    // ComputeGrowth ranks stacks.
    const int64_t ranked =
        g.rank_by == RankBy::kResident
            ? static_cast<int64_t>(s.to.rss.value_or(0)) - static_cast<int64_t>(s.from.rss.value_or(0))
        : g.rank_by == RankBy::kMapped ? s.growth()
                                       : s.committed_growth();
    // Ascending: not untouched first, then the most growth.
    return std::make_tuple(!by_resident && MostlyUntouched(s.kind()), -ranked, -s.committed_growth(), -s.growth(),
                           ~uint64_t{s.to.mapped}, m.group.stacks.front());
  };
  std::sort(out.begin(), out.end(), [&](const MethodGrowth& x, const MethodGrowth& y) { return key(x) < key(y); });
  return out;
}

}  // namespace pageblame::analysis

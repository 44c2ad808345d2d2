#include "processor/analysis/attribution_methods.h"

#include <algorithm>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "processor/analysis/resident_view.h"

namespace pageblame::analysis {
namespace {

// The sums over a group's stacks, but regions and table_rss (CountRegions).
StackTotal SumOf(const Attribution& a, const MethodGroup& g) {
  StackTotal t;
  const StackTotal& top = a.stacks[g.stacks.front()];
  t.stack = top.stack;
  t.first_call = top.first_call;
  for (size_t i : g.stacks) {
    const StackTotal& s = a.stacks[i];
    t.bytes += s.bytes;
    t.committed += s.committed;
    AddRss(&t.rss, s.rss);
    AddHeapUse(&t.heap, s.heap);
    t.calls += s.calls;
    t.kinds.Add(s.kinds);
  }
  return t;
}

// Each method's regions (once each) and table rss, region by region.
void CountRegions(const index::TraceIndex& idx, const Attribution& a, std::vector<MethodTotal>* methods) {
  absl::flat_hash_map<StackId, size_t> method_of;
  for (size_t m = 0; m < methods->size(); ++m) {
    for (size_t i : (*methods)[m].group.stacks) method_of[a.stacks[i].stack] = m;
  }
  for (const RegionAttribution& ra : a.regions) {
    absl::flat_hash_map<size_t, uint64_t> bytes;  // method -> its bytes of this region
    for (const CallBytes& c : ra.calls) {
      auto it = method_of.find(idx.event(c.call).stack);
      if (it != method_of.end()) bytes[it->second] += c.bytes;
    }
    for (const auto& [m, b] : bytes) {
      StackTotal& t = (*methods)[m].total;
      ++t.regions;
      if (!a.table_rss) continue;
      if (!t.table_rss) t.table_rss.emplace();
      if (ra.region.rss) {
        t.table_rss->Add(ra.region.size(), *ra.region.rss, b);
      } else {
        t.table_rss->AddUnknown(b);
      }
    }
  }
}

}  // namespace

bool MostlyUntouched(std::optional<RegionKind> kind) {
  return kind == RegionKind::kThreadStack || kind == RegionKind::kReservation;
}

std::vector<MethodTotal> AttributionByMethod(session::StackFrames& frames, const Attribution& a,
                                             const SummaryOptions& options) {
  std::vector<EventId> firsts;
  firsts.reserve(a.stacks.size());
  for (const StackTotal& s : a.stacks) firsts.push_back(s.first_call);
  std::vector<MethodTotal> out;
  for (MethodGroup& g : GroupByMethod(frames, firsts, options)) {
    StackTotal t = SumOf(a, g);
    out.push_back({std::move(g), std::move(t)});
  }
  CountRegions(frames.index(), a, &out);
  const bool by_resident = a.rank_by == RankBy::kResident && a.snapshot != nullptr;
  auto key = [&](const MethodTotal& m) {
    const StackTotal& t = m.total;
    const uint64_t ranked = a.rank_by == RankBy::kResident ? t.rss.value_or(0)
                            : a.rank_by == RankBy::kMapped ? t.bytes
                                                           : t.committed;
    // Ascending: not untouched first, then the most bytes.
    return std::make_tuple(!by_resident && MostlyUntouched(t.kind()), ~ranked, ~t.committed, ~t.bytes,
                           m.group.stacks.front());
  };
  std::sort(out.begin(), out.end(), [&](const MethodTotal& x, const MethodTotal& y) { return key(x) < key(y); });
  return out;
}

}  // namespace pageblame::analysis

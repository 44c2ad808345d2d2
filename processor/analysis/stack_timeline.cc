#include "processor/analysis/stack_timeline.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "processor/index/committed.h"

namespace pageblame::analysis {
namespace {

// n + 1 boundaries from just before the first event to the end; from the
// cut of an index record --max-size thinned (no whole state before it).
std::vector<uint64_t> Boundaries(const index::TraceStats& s, size_t n) {
  std::vector<uint64_t> t(n + 1);
  const uint64_t first = std::max(s.first_time, s.thinned_before), last = std::max(s.last_time, first);
  t[0] = s.thinned_before > 0 ? first : first > 0 ? first - 1 : 0;
  for (size_t k = 1; k < n; ++k) t[k] = first + (last - first) * k / n;
  t[n] = index::kEndOfTrace;
  return t;
}

bool EarlierCall(const index::TraceIndex& idx, EventId a, EventId b) {
  if (!b.valid()) return true;
  return std::make_tuple(idx.event(a).time, a.value()) < std::make_tuple(idx.event(b).time, b.value());
}

// A stack's versions while they are collected: their sizes as changes at
// boundaries, and the version that says its kind.
struct Collected {
  struct Change {
    size_t k;
    int64_t mapped, committed;
  };
  EventId first_call;
  std::vector<Change> changes;
  const index::Version* largest = nullptr;  // the largest committed, else the largest

  void Add(const index::Version& v, size_t lo, size_t hi, size_t end) {
    auto weight = [](const index::Version& x) { return std::make_pair(index::IsCommitted(x), x.end - x.start); };
    if (largest == nullptr || weight(v) > weight(*largest)) largest = &v;
    const int64_t size = static_cast<int64_t>(v.end - v.start);
    const int64_t committed = index::IsCommitted(v) ? size : 0;
    changes.push_back({lo, size, committed});
    if (hi < end) changes.push_back({hi, -size, -committed});
  }
};

// The steps of one measure: the running sum wherever a change moves it.
std::vector<TimelineStep> Steps(const std::vector<Collected::Change>& sorted, bool committed, uint64_t* max) {
  std::vector<TimelineStep> out;
  int64_t value = 0;
  for (size_t i = 0; i < sorted.size();) {
    const size_t k = sorted[i].k;
    int64_t d = 0;
    for (; i < sorted.size() && sorted[i].k == k; ++i) d += committed ? sorted[i].committed : sorted[i].mapped;
    if (d == 0) continue;
    value += d;
    out.push_back({k, static_cast<uint64_t>(value)});
    *max = std::max(*max, static_cast<uint64_t>(value));
  }
  return out;
}

// A series without its kind yet (said only of the series kept: each kind
// may symbolize a stack), and the version that will say it.
struct Settled {
  StackSeries series;
  const index::Version* largest;
};

Settled Settle(Collected c) {
  std::sort(c.changes.begin(), c.changes.end(),
            [](const Collected::Change& a, const Collected::Change& b) { return a.k < b.k; });
  StackSeries s;
  s.first_call = c.first_call;
  s.mapped = Steps(c.changes, /*committed=*/false, &s.max_mapped);
  s.committed = Steps(c.changes, /*committed=*/true, &s.max_committed);
  return {std::move(s), c.largest};
}

StackSeries WithKind(Settled s, const KindFunction& kind_of) {
  if (s.largest != nullptr) s.series.kind = kind_of(*s.largest);
  return std::move(s.series);
}

// The process's totals at each boundary, from their changes there.
std::vector<uint64_t> Totals(const std::vector<int64_t>& changes, size_t n) {
  std::vector<uint64_t> out;
  int64_t sum = 0;
  for (size_t k = 0; k < n; ++k) {
    sum += changes[k];
    out.push_back(static_cast<uint64_t>(sum));
  }
  return out;
}

// The `n` stacks with the most committed bytes, then mapped, then the
// earliest first call.
std::vector<StackSeries> Ranked(const index::TraceIndex& idx, std::vector<Settled> all, size_t n,
                                const KindFunction& kind_of) {
  std::sort(all.begin(), all.end(), [&](const Settled& x, const Settled& y) {
    const StackSeries &a = x.series, &b = y.series;
    if (a.max_committed != b.max_committed) return a.max_committed > b.max_committed;
    if (a.max_mapped != b.max_mapped) return a.max_mapped > b.max_mapped;
    return EarlierCall(idx, a.first_call, b.first_call);
  });
  std::vector<StackSeries> out;
  for (size_t i = 0; i < all.size() && i < n; ++i) out.push_back(WithKind(std::move(all[i]), kind_of));
  return out;
}

}  // namespace

StackTimeline ComputeStackTimeline(const index::TraceIndex& idx, uint32_t process, size_t buckets,
                                   size_t series_stacks, const KindFunction& kind_of) {
  StackTimeline out;
  out.boundaries = Boundaries(idx.stats(), std::max<size_t>(buckets, 1));
  const std::vector<uint64_t>& t = out.boundaries;
  auto at_or_after = [&](uint64_t time) {
    return static_cast<size_t>(std::lower_bound(t.begin(), t.end(), time) - t.begin());
  };
  absl::flat_hash_map<StackId, Collected> by_stack;
  Collected before;
  std::vector<int64_t> mapped(t.size() + 1, 0), committed(t.size() + 1, 0);
  for (uint32_t i = 0; i < idx.num_versions(); ++i) {
    const index::Version& v = idx.version(VersionId(i));
    if (v.process != process || v.t_from >= v.t_to) continue;
    const size_t lo = at_or_after(v.t_from);
    const size_t hi = v.t_to == index::kEndOfTrace ? t.size() : at_or_after(v.t_to);
    if (lo >= hi) continue;  // began and ended between two boundaries
    Collected& c = v.origin.valid() ? by_stack[idx.event(v.origin).stack] : before;
    if (v.origin.valid() && EarlierCall(idx, v.origin, c.first_call)) c.first_call = v.origin;
    c.Add(v, lo, hi, t.size());
    const int64_t size = static_cast<int64_t>(v.end - v.start), acc = index::IsCommitted(v) ? size : 0;
    mapped[lo] += size;
    committed[lo] += acc;
    mapped[hi] -= size;  // hi == t.size(): the slot past the last boundary, never summed
    committed[hi] -= acc;
  }
  std::vector<Settled> all;
  for (auto& [stack, c] : by_stack) all.push_back(Settle(std::move(c)));
  out.before_trace = WithKind(Settle(std::move(before)), kind_of);
  out.stacks = Ranked(idx, std::move(all), series_stacks, kind_of);
  out.mapped = Totals(mapped, t.size());
  out.committed = Totals(committed, t.size());
  return out;
}

}  // namespace pageblame::analysis

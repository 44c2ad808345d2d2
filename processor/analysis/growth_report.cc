#include "processor/analysis/growth_report.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "processor/base/status_macros.h"
#include "processor/index/committed.h"
#include "processor/analysis/resident_view.h"

namespace pageblame::analysis {
namespace {

// A call's bytes at either end. What it made in between is apart (a
// CallMade): most calls of a long recording have nothing left at either
// end, only churn, and need 16 bytes, not a CallGrowth.
struct CallGrowth {
  BytesAt from, to;
  KindTally from_kinds, to_kinds;
};

// Bytes a call made between `from` and `to` in one process (the versions
// it began): 16 B.
struct CallMade {
  uint32_t process;
  EventId call;
  uint64_t bytes;
};

bool Wanted(const GrowthOptions& o, const index::Version& v) {
  if (o.kinds.empty() || !o.kind_of) return true;
  return std::find(o.kinds.begin(), o.kinds.end(), o.kind_of(v)) != o.kinds.end();
}
using CallKey = std::pair<uint32_t, EventId>;  // (process entry, credited call)
using EndsMap = absl::flat_hash_map<CallKey, CallGrowth>;

// Resident bytes into a sum over processes: once bytes of a process
// without a snapshot are in it, the sum is unknown for good.
void AddRssOf(BytesAt* sum, std::optional<uint64_t> rss, bool incomplete) {
  sum->rss_incomplete |= incomplete;
  if (sum->rss_incomplete) {
    sum->rss.reset();
  } else {
    AddRss(&sum->rss, rss);
  }
}

// The same for arena bytes in use and free.
void AddHeapOf(BytesAt* sum, const std::optional<HeapUse>& u, bool incomplete) {
  sum->heap_incomplete |= incomplete;
  if (sum->heap_incomplete) {
    sum->heap.reset();
  } else {
    AddHeapUse(&sum->heap, u);
  }
}

// The snapshots that speak for one process at one moment: residency and
// heap; `no_*`: the process has none while others have.
struct Snapshots {
  const residency::ResidencySnapshot* rss = nullptr;
  bool no_rss = false;
  const heap::HeapSnapshot* heap = nullptr;
  bool no_heap = false;
};

void Add(BytesAt* b, const index::Version& v, std::optional<RegionKind> kind, const Snapshots& s) {
  const uint64_t size = v.end - v.start;
  b->mapped += size;
  if (index::IsCommitted(v)) b->committed += size;
  ++b->regions;
  AddRssOf(b, ResidentView::Bytes(s.rss, v.start, v.end), s.no_rss);
  // Only arena bytes (as attribute): another kind's {0, 0} would make an
  // unknown arena part read 0.
  AddHeapOf(b, ArenaKind(kind) ? HeapView::Split(s.heap, kind, v, v.start, v.end) : std::nullopt, s.no_heap);
}

void Add(BytesAt* sum, const BytesAt& b) {
  sum->mapped += b.mapped;
  sum->committed += b.committed;
  sum->regions += b.regions;
  AddRssOf(sum, b.rss, b.rss_incomplete);
  AddHeapOf(sum, b.heap, b.heap_incomplete);
}

// With snapshots, nothing mapped is 0 resident bytes, not unknown: a stack
// with nothing at `from` grew by all it has at `to`. Bytes mapped that no
// snapshot read (mapped after it, PROT_NONE alone) stay unknown.
void NothingIsNoneResident(bool snapshots, bool heap_snapshots, BytesAt* b) {
  if (snapshots && !b->rss && b->mapped == 0) b->rss = 0;
  if (heap_snapshots && !b->heap && !b->heap_incomplete && b->mapped == 0) b->heap.emplace();
}

bool EarlierCall(const index::TraceIndex& idx, EventId a, EventId b) {
  return std::make_tuple(idx.event(a).time, a.value()) < std::make_tuple(idx.event(b).time, b.value());
}

// The bytes at `from` and `to` of every (process, call), and of no call.
void AddEnds(const index::TraceIndex& idx, const GrowthOptions& o, Growth* g, EndsMap* calls) {
  const ResidentView rss(o.rss, idx);
  const HeapView heap(o.heap, idx);
  g->snapshots = rss.has_snapshots();
  g->heap_snapshots = heap.has_snapshots();
  for (uint32_t p : o.processes) {
    for (const bool at_to : {false, true}) {
      Snapshots snap;
      snap.rss = rss.SnapshotFor(p, at_to ? o.to : o.from);
      snap.no_rss = g->snapshots && snap.rss == nullptr;
      snap.heap = heap.SnapshotFor(p, at_to ? o.to : o.from, rss);
      snap.no_heap = g->heap_snapshots && snap.heap == nullptr;
      const bool no_snapshot = snap.no_rss;
      bool counted = false;
      for (VersionId id : idx.RegionsAt(p, at_to ? o.to : o.from)) {
        const index::Version& v = idx.version(id);
        if (!Wanted(o, v)) continue;
        counted = true;
        const std::optional<RegionKind> kind = o.kind_of ? std::optional<RegionKind>(o.kind_of(v)) : std::nullopt;
        Add(at_to ? &g->total_to : &g->total_from, v, kind, snap);
        const EventId call = CreditedCall(v, o.by);
        if (!call.valid()) {
          Add(at_to ? &g->before_to : &g->before_from, v, kind, snap);
          continue;
        }
        CallGrowth& c = (*calls)[{p, call}];
        Add(at_to ? &c.to : &c.from, v, kind, snap);
        if (o.kind_of) (at_to ? c.to_kinds : c.from_kinds).Add(o.kind_of(v), v.end - v.start);
      }
      if (counted && no_snapshot) (at_to ? g->no_snapshot_to : g->no_snapshot_from).push_back(p);
    }
  }
}

// What each call began between `from` and `to` that is credited to it: the
// pages it created (or, by commit, committed). Splits, moves and prot
// changes begin versions too, but of pages made earlier. One entry a
// (process, call), sorted by them; counted first, so sized once.
std::vector<CallMade> MadeBetween(const index::TraceIndex& idx, const GrowthOptions& o) {
  std::vector<bool> selected(idx.num_processes(), false);
  for (uint32_t p : o.processes) {
    if (p < selected.size()) selected[p] = true;
  }
  const auto counts = [&](const index::Version& v) {
    if (!selected[v.process] || v.t_from == v.t_to || v.t_from <= o.from || v.t_from > o.to) return false;
    if (v.begin != index::Begin::kCreated && v.begin != index::Begin::kCommitted) return false;
    return v.begin_event.valid() && CreditedCall(v, o.by) == v.begin_event && Wanted(o, v);
  };
  size_t n = 0;
  for (uint32_t i = 0; i < idx.num_versions(); ++i) n += counts(idx.version(VersionId(i))) ? 1 : 0;
  std::vector<CallMade> made;
  made.reserve(n);
  for (uint32_t i = 0; i < idx.num_versions(); ++i) {
    const index::Version& v = idx.version(VersionId(i));
    if (counts(v)) made.push_back({v.process, v.begin_event, v.end - v.start});
  }
  const auto key = [](const CallMade& m) { return std::make_pair(m.process, m.call); };
  std::sort(made.begin(), made.end(), [&](const CallMade& a, const CallMade& b) { return key(a) < key(b); });
  size_t out = 0;  // each (process, call) once, its bytes summed
  for (size_t i = 0; i < made.size(); ++i) {
    if (out > 0 && key(made[out - 1]) == key(made[i])) {
      made[out - 1].bytes += made[i].bytes;
    } else {
      made[out++] = made[i];
    }
  }
  made.resize(out);
  return made;
}

// The bytes `call` made in process `p`, or 0.
uint64_t MadeBy(const std::vector<CallMade>& made, const CallKey& call) {
  const auto it = std::lower_bound(made.begin(), made.end(), call, [](const CallMade& m, const CallKey& k) {
    return std::make_pair(m.process, m.call) < k;
  });
  return it != made.end() && it->process == call.first && it->call == call.second ? it->bytes : 0;
}

// A call's growth into its stack's row.
void Credit(const index::TraceIndex& idx, EventId call, const CallGrowth& c, uint64_t made_bytes, StackGrowth* s) {
  if (!s->first_call.valid()) {
    s->stack = idx.event(call).stack;
    s->first_call = call;
  }
  Add(&s->from, c.from);
  Add(&s->to, c.to);
  const uint64_t kept = std::min(c.from.mapped, c.to.mapped);
  s->added += c.to.mapped - kept;
  s->removed += c.from.mapped - kept;
  if (made_bytes > c.to.mapped) s->made_gone += made_bytes - c.to.mapped;
  if (c.from.mapped || c.to.mapped) ++s->calls;
  s->from_kinds.Add(c.from_kinds);
  s->to_kinds.Add(c.to_kinds);
  if (EarlierCall(idx, call, s->first_call)) s->first_call = call;
}

// The stacks that only churned: the calls of `made` with nothing at either
// end, summed a row per stack (their earliest call first), those of a
// stack with bytes at an end (`slot`) credited to its row in `kept`
// instead. Frees `made`.
std::vector<ChurnedStack> Churned(const index::TraceIndex& idx, const EndsMap& ends,
                                  const absl::flat_hash_map<StackId, size_t>& slot, const CallGrowth& nothing,
                                  std::vector<CallMade> made, std::vector<StackGrowth>* kept) {
  // Counted first: sized once, never twice its size while `made` is held.
  const auto churned_only = [&](const CallMade& m) {
    return !ends.contains(CallKey{m.process, m.call}) && !slot.contains(idx.event(m.call).stack);
  };
  std::vector<ChurnedStack> churned;
  churned.reserve(std::count_if(made.begin(), made.end(), churned_only));
  for (const CallMade& m : made) {
    if (ends.contains(CallKey{m.process, m.call})) continue;
    const StackId stack = idx.event(m.call).stack;
    if (const auto it = slot.find(stack); it != slot.end()) {
      Credit(idx, m.call, nothing, m.bytes, &(*kept)[it->second]);
    } else {
      churned.push_back({stack, m.call, m.bytes});
    }
  }
  made = {};
  std::sort(churned.begin(), churned.end(), [&](const ChurnedStack& a, const ChurnedStack& b) {
    return a.stack != b.stack ? a.stack < b.stack : EarlierCall(idx, a.first_call, b.first_call);
  });
  size_t out = 0;  // a row per stack: its earliest call, the bytes summed
  for (size_t i = 0; i < churned.size(); ++i) {
    if (out > 0 && churned[out - 1].stack == churned[i].stack) {
      churned[out - 1].made_gone += churned[i].made_gone;
    } else {
      churned[out++] = churned[i];
    }
  }
  churned.resize(out);
  churned.shrink_to_fit();
  return churned;
}

// The growth's rows in order (GrowthOptions::rank_by, then the tie rules):
// a row per stack with bytes at either end (`ends`, a slot each, sized
// once), and those that only churned in 16 B each, after every row that
// ranks before them (they rank alike but for made_gone and their first
// call). Fails if the rows and before-trace do not add up to the totals.
absl::StatusOr<GrowthStacks> RankedStacks(const index::TraceIndex& idx, const Growth& g, const EndsMap& ends,
                                          std::vector<CallMade> made) {
  absl::flat_hash_map<StackId, size_t> slot;
  for (const auto& [key, c] : ends) slot.try_emplace(idx.event(key.second).stack, slot.size());
  std::vector<StackGrowth> kept(slot.size());
  CallGrowth nothing;
  NothingIsNoneResident(g.snapshots, g.heap_snapshots, &nothing.from);
  NothingIsNoneResident(g.snapshots, g.heap_snapshots, &nothing.to);
  for (const auto& [key, c] : ends) {
    Credit(idx, key.second, c, MadeBy(made, key), &kept[slot.at(idx.event(key.second).stack)]);
  }
  std::vector<ChurnedStack> churned = Churned(idx, ends, slot, nothing, std::move(made), &kept);
  // Resident growth with an unknown end counts that end as 0.
  auto key = [by = g.rank_by](const StackGrowth& s) -> int64_t {
    if (by == RankBy::kResident) {
      return static_cast<int64_t>(s.to.rss.value_or(0)) - static_cast<int64_t>(s.from.rss.value_or(0));
    }
    return by == RankBy::kMapped ? s.growth() : s.committed_growth();
  };
  std::sort(kept.begin(), kept.end(), [&](const StackGrowth& a, const StackGrowth& b) {
    if (key(a) != key(b)) return key(a) > key(b);
    if (a.committed_growth() != b.committed_growth()) return a.committed_growth() > b.committed_growth();
    if (a.growth() != b.growth()) return a.growth() > b.growth();
    if (a.to.mapped != b.to.mapped) return a.to.mapped > b.to.mapped;
    if (a.made_gone != b.made_gone) return a.made_gone > b.made_gone;
    if (a.first_call != b.first_call) return EarlierCall(idx, a.first_call, b.first_call);
    return a.stack < b.stack;
  });
  std::sort(churned.begin(), churned.end(), [&](const ChurnedStack& a, const ChurnedStack& b) {
    if (a.made_gone != b.made_gone) return a.made_gone > b.made_gone;
    if (a.first_call != b.first_call) return EarlierCall(idx, a.first_call, b.first_call);
    return a.stack < b.stack;
  });
  // A churned stack is 0 at every key before made_gone, and a kept one has
  // bytes at an end: never equal up to there.
  const size_t at = std::partition_point(kept.begin(), kept.end(), [&](const StackGrowth& s) {
                      return std::make_tuple(key(s), s.committed_growth(), s.growth(), s.to.mapped) >
                             std::make_tuple(int64_t{0}, int64_t{0}, int64_t{0}, uint64_t{0});
                    }) - kept.begin();
  BytesAt sum_from = g.before_from, sum_to = g.before_to;
  for (const StackGrowth& s : kept) {
    Add(&sum_from, s.from);
    Add(&sum_to, s.to);
  }
  if (sum_from.mapped != g.total_from.mapped || sum_to.mapped != g.total_to.mapped ||
      sum_from.committed != g.total_from.committed || sum_to.committed != g.total_to.committed) {
    return absl::InternalError(absl::StrCat("growth does not add up: stacks and before-trace hold ",
                                            sum_from.mapped, " -> ", sum_to.mapped, " bytes, the totals ",
                                            g.total_from.mapped, " -> ", g.total_to.mapped));
  }
  BytesAt none;  // a churned row's ends: a sum of nothing
  Add(&none, nothing.from);
  return GrowthStacks(std::move(kept), std::move(churned), at, none);
}

}  // namespace

void AddBytesAt(BytesAt* sum, const BytesAt& b) { Add(sum, b); }

absl::StatusOr<Growth> ComputeGrowth(const index::TraceIndex& idx, const GrowthOptions& o) {
  if (o.from > o.to) {
    return absl::InvalidArgumentError("the start of a growth range is after its end");
  }
  Growth g;
  g.processes = o.processes;
  g.from = o.from;
  g.to = o.to;
  g.by = o.by;
  g.kinds = o.kinds;
  g.rank_by = o.rank_by;
  EndsMap ends;
  AddEnds(idx, o, &g, &ends);
  std::vector<CallMade> made = MadeBetween(idx, o);
  for (BytesAt* b : {&g.total_from, &g.total_to, &g.before_from, &g.before_to}) {
    NothingIsNoneResident(g.snapshots, g.heap_snapshots, b);
  }
  for (auto& [key, c] : ends) {
    NothingIsNoneResident(g.snapshots, g.heap_snapshots, &c.from);
    NothingIsNoneResident(g.snapshots, g.heap_snapshots, &c.to);
  }
  ASSIGN_OR_RETURN(g.stacks, RankedStacks(idx, g, ends, std::move(made)));
  return g;
}

}  // namespace pageblame::analysis

#include "processor/analysis/attribute_report.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "processor/index/committed.h"
#include "processor/analysis/resident_view.h"
#include "processor/base/format.h"
#include "processor/base/status_macros.h"
#include "processor/base/usage_error.h"
#include "processor/regions/range_set.h"

namespace pageblame::analysis {
namespace {

// True if a + b fits in 64 bits.
bool SumFits(uint64_t a, uint64_t b) { return b <= ~uint64_t{0} - a; }

// The address space of one process at one time: its alive versions, sorted
// by start and disjoint (checked), with overlap queries by binary search.
class AliveVersions {
 public:
  static absl::StatusOr<AliveVersions> Make(const index::TraceIndex& idx, uint32_t p, uint64_t at) {
    AliveVersions a(idx);
    a.versions_ = idx.RegionsAt(p, at);
    for (size_t i = 1; i < a.versions_.size(); ++i) {
      const index::Version& prev = idx.version(a.versions_[i - 1]);
      const index::Version& cur = idx.version(a.versions_[i]);
      if (cur.start < prev.end) {
        return absl::InternalError(absl::StrCat(
            "the index has overlapping live regions in pid ", idx.process(p).pid, " at ",
            FormatTime(at), ": ", Hex(prev.start), "-", Hex(prev.end), " and ", Hex(cur.start), "-",
            Hex(cur.end)));
      }
    }
    return a;
  }

  // Calls fn(version, s, e) for each alive version overlapping [start, end),
  // in address order, with [s, e) the overlap.
  template <typename Fn>
  void ForEachOverlap(uint64_t start, uint64_t end, Fn fn) const {
    auto it = std::partition_point(versions_.begin(), versions_.end(),
                                   [&](VersionId v) { return idx_.version(v).end <= start; });
    for (; it != versions_.end(); ++it) {
      const index::Version& v = idx_.version(*it);
      if (v.start >= end) break;
      fn(v, std::max(v.start, start), std::min(v.end, end));
    }
  }

  // Saturates at 2^64 - 1 (overlapping regions could pass it): the number
  // only ranks candidate processes and is printed as a size.
  uint64_t MappedBytes(absl::Span<const regions::Region> regions) const {
    uint64_t n = 0;
    for (const regions::Region& r : regions) {
      ForEachOverlap(r.start, r.end, [&](const index::Version&, uint64_t s, uint64_t e) {
        n = SumFits(n, e - s) ? n + (e - s) : ~uint64_t{0};
      });
    }
    return n;
  }

 private:
  explicit AliveVersions(const index::TraceIndex& idx) : idx_(idx) {}
  const index::TraceIndex& idx_;
  std::vector<VersionId> versions_;
};

bool AliveAt(const index::Process& p, uint64_t at) {
  return p.t_start <= at && (at < p.t_exit || p.t_exit == index::kEndOfTrace);
}

std::string Describe(const index::TraceIndex& idx, uint32_t p, uint64_t mapped) {
  const index::Process& proc = idx.process(p);
  return absl::StrCat("pid ", proc.pid, " (", std::string(idx.strings().Get(proc.comm)), ", ",
                      HumanBytes(mapped), " mapped)");
}

// The bytes of `within` that some version of `p` covered at some time up
// to `at`. Only the unmapped parts of the regions asked about need this
// answer, a few ranges: each version is one compare against their bounds,
// and only the few that meet them go into the set, rather than a set of
// every byte ever mapped.
regions::RangeSet EverMappedWithin(const index::TraceIndex& idx, uint32_t p, uint64_t at,
                                   const regions::RangeSet& within) {
  regions::RangeSet out;
  if (within.empty()) return out;
  std::vector<regions::RangeSet::Range> ranges(within.begin(), within.end());
  const uint64_t lo = ranges.front().first, hi = ranges.back().second;
  std::vector<regions::RangeSet::Range> met;
  for (uint32_t i = 0; i < idx.num_versions(); ++i) {
    const index::Version& v = idx.version(VersionId(i));
    if (v.end <= lo || v.start >= hi) continue;
    if (v.process != p || v.t_from > at) continue;
    // A split is a part of the version it was split from (same process,
    // no later t_from): nothing new.
    if (v.begin == index::Begin::kSplit) continue;
    auto r = std::upper_bound(ranges.begin(), ranges.end(), v.start,
                              [](uint64_t a, const regions::RangeSet::Range& x) { return a < x.second; });
    for (; r != ranges.end() && r->first < v.end; ++r) {
      met.push_back({std::max(r->first, v.start), std::min(r->second, v.end)});
    }
  }
  std::sort(met.begin(), met.end());
  for (const auto& [s, e] : met) out.Add(s, e);
  return out;
}

bool EarlierCall(const index::TraceIndex& idx, EventId a, EventId b) {
  return std::make_tuple(idx.event(a).time, a.value()) < std::make_tuple(idx.event(b).time, b.value());
}

}  // namespace

uint64_t RegionAttribution::created_bytes() const {
  uint64_t n = 0;
  for (const CallBytes& c : calls) n += c.bytes;
  return n;
}

absl::StatusOr<uint32_t> ChooseProcess(const index::TraceIndex& idx,
                                       absl::Span<const regions::Region> regions,
                                       const AttributeOptions& o) {
  if (idx.num_processes() == 0) return UsageError("the trace has no processes");
  std::vector<uint32_t> all;
  for (uint32_t p = 0; p < idx.num_processes(); ++p) all.push_back(p);
  auto mapped = [&](uint32_t p) -> absl::StatusOr<uint64_t> {
    ASSIGN_OR_RETURN(AliveVersions a, AliveVersions::Make(idx, p, o.at));
    return a.MappedBytes(regions);
  };

  if (o.pid) {
    std::vector<uint32_t> gens = idx.ProcessesWithPid(*o.pid);
    // The front ends check the pid first (session::CheckPid says which the
    // trace has); here it is a caller's mistake.
    if (gens.empty()) return absl::FailedPreconditionError(absl::StrCat("pid ", *o.pid, " is not in the trace"));
    if (gens.size() == 1) return gens[0];
    // A reused pid: the entry that has the bytes, alive at `at`, newest.
    uint32_t best = gens[0];
    std::tuple<bool, bool, uint64_t, uint32_t> best_key{false, false, 0, 0};
    for (uint32_t p : gens) {
      ASSIGN_OR_RETURN(uint64_t m, mapped(p));
      auto key = std::make_tuple(m > 0, AliveAt(idx.process(p), o.at), idx.process(p).t_start, p);
      if (p == gens[0] || key > best_key) best = p, best_key = key;
    }
    return best;
  }
  if (all.size() == 1) return all[0];
  // Nothing to attribute (an empty diff): any process answers.
  if (std::none_of(regions.begin(), regions.end(), [](const regions::Region& r) { return r.end > r.start; }))
    return all[0];

  std::vector<std::pair<uint32_t, uint64_t>> having;
  for (uint32_t p : all) {
    ASSIGN_OR_RETURN(uint64_t m, mapped(p));
    if (m > 0) having.push_back({p, m});
  }
  if (having.size() == 1) return having[0].first;
  if (having.empty()) {
    return UsageError(absl::StrCat(
        "none of the ", all.size(), " traced processes (pids ", absl::StrJoin(idx.Pids(), ", "),
        ") had any of these bytes mapped at ", FormatTime(o.at),
        "; choose one with --pid to see them all as not mapped"));
  }
  std::vector<std::string> names;
  for (const auto& [p, m] : having) names.push_back(Describe(idx, p, m));
  return UsageError(absl::StrCat(having.size(), " traced processes had these bytes mapped at ",
                                                 FormatTime(o.at), ": ", absl::StrJoin(names, ", "),
                                                 "; choose one with --pid"));
}

namespace {

// The unmapped parts of every region (region index, range), kept so that
// which of their bytes the trace never saw is answered for all at once.
struct Unmapped {
  std::vector<std::pair<size_t, regions::RangeSet::Range>> parts;
  regions::RangeSet all;
};

// Region `ri`'s bytes: by credited call, from before the trace, unmapped
// (whose ranges go to `unmapped`); checked to add up to its size.
absl::StatusOr<RegionAttribution> AttributeRegion(const index::TraceIndex& idx,
                                                  const AliveVersions& alive,
                                                  const regions::Region& r, size_t ri,
                                                  const AttributeOptions& o,
                                                  const residency::ResidencySnapshot* snapshot,
                                                  const heap::HeapSnapshot* heap, Unmapped* unmapped) {
  RegionAttribution ra;
  ra.region = r;
  absl::flat_hash_map<EventId, CallBytes> by_call;
  KindTally kinds;
  std::vector<std::pair<uint64_t, uint64_t>> gaps;
  uint64_t cursor = r.start;
  alive.ForEachOverlap(r.start, r.end, [&](const index::Version& v, uint64_t s, uint64_t e) {
    if (s > cursor) gaps.push_back({cursor, s});
    cursor = e;
    const uint64_t committed = index::IsCommitted(v) ? e - s : 0;
    // Without kind_of no kind is kept (kAnon then is never read).
    const RegionKind kind = o.kind_of ? o.kind_of(v) : RegionKind::kAnon;
    if (o.kind_of) kinds.Add(kind, e - s);
    const std::optional<uint64_t> rss = ResidentView::Bytes(snapshot, s, e);
    AddRss(&ra.rss, rss);
    if (const EventId call = CreditedCall(v, o.by); call.valid()) {
      CallBytes& c = by_call[call];
      c.bytes += e - s;
      c.committed += committed;
      AddRss(&c.rss, rss);
      // Only arena bytes: another kind's {0, 0} would make a sum whose
      // arena part is unknown (made after the heap snapshot) read 0 in use.
      if (!o.kind_of || ArenaKind(kind)) {
        AddHeapUse(&c.heap, HeapView::Split(heap, o.kind_of ? std::optional<RegionKind>(kind) : std::nullopt, v, s, e));
      }
      if (o.kind_of) c.kinds.Add(kind, e - s);
    } else {
      ra.before_trace_bytes += e - s;
      ra.before_trace_committed += committed;
    }
  });
  if (r.end > cursor) gaps.push_back({cursor, r.end});
  for (const auto& [s, e] : gaps) {
    ra.unmapped_bytes += e - s;
    unmapped->parts.push_back({ri, {s, e}});
    unmapped->all.Add(s, e);
  }
  for (auto& [ev, c] : by_call) {
    c.call = ev;
    AddHeapUse(&ra.heap, c.heap);
    ra.calls.push_back(c);
  }
  ra.kind = kinds.Dominant();
  if (ra.kind && *ra.kind != RegionKind::kReservation && TableSaysGcHeap(r.usage)) ra.kind = RegionKind::kGcHeap;
  std::sort(ra.calls.begin(), ra.calls.end(), [&](const CallBytes& a, const CallBytes& b) {
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    return EarlierCall(idx, a.call, b.call);
  });
  const uint64_t size = r.end > r.start ? r.end - r.start : 0;
  if (ra.created_bytes() + ra.before_trace_bytes + ra.unmapped_bytes != size) {
    return absl::InternalError(absl::StrCat("attribution of ", Hex(r.start), "-", Hex(r.end),
                                            " does not add up: ", ra.created_bytes(), " + ",
                                            ra.before_trace_bytes, " + ", ra.unmapped_bytes,
                                            " != ", size));
  }
  return ra;
}

// The per-stack totals over all regions, region by region.
class StackTotals {
 public:
  // With `table_rss` (some region has rss), each stack's share is kept.
  StackTotals(const index::TraceIndex& idx, bool table_rss) : idx_(idx), table_rss_(table_rss) {}

  void Add(const RegionAttribution& ra, size_t ri) {
    std::vector<size_t> touched;  // slots with bytes in this region
    for (const CallBytes& c : ra.calls) {
      const StackId stack = idx_.event(c.call).stack;
      auto [it, inserted] = slot_.try_emplace(stack, totals_.size());
      if (inserted) {
        StackTotal st;
        st.stack = stack;
        st.first_call = c.call;
        totals_.push_back(std::move(st));
        last_region_.push_back(SIZE_MAX);
        region_bytes_.push_back(0);
      }
      StackTotal& st = totals_[it->second];
      st.bytes += c.bytes;
      st.committed += c.committed;
      AddRss(&st.rss, c.rss);
      AddHeapUse(&st.heap, c.heap);
      st.kinds.Add(c.kinds);
      if (last_region_[it->second] != ri) {
        last_region_[it->second] = ri;
        ++st.regions;
        touched.push_back(it->second);
        region_bytes_[it->second] = 0;
      }
      region_bytes_[it->second] += c.bytes;
      if (calls_seen_.insert(c.call).second) ++st.calls;
      if (EarlierCall(idx_, c.call, st.first_call)) st.first_call = c.call;
    }
    if (!table_rss_) return;
    for (size_t slot : touched) {
      std::optional<regions::ResidentBytes>& r = totals_[slot].table_rss;
      if (!r) r.emplace();
      if (ra.region.rss) {
        r->Add(ra.region.size(), *ra.region.rss, region_bytes_[slot]);
      } else {
        r->AddUnknown(region_bytes_[slot]);
      }
    }
  }

  // Bytes descending, then first call time, then stack id; checked to add
  // up to the created bytes.
  absl::StatusOr<std::vector<StackTotal>> Sorted(uint64_t created_bytes, RankBy by) && {
    auto key = [by](const StackTotal& s) {
      return by == RankBy::kResident ? s.rss.value_or(0) : by == RankBy::kMapped ? s.bytes : s.committed;
    };
    std::sort(totals_.begin(), totals_.end(), [&](const StackTotal& a, const StackTotal& b) {
      if (key(a) != key(b)) return key(a) > key(b);
      if (a.committed != b.committed) return a.committed > b.committed;
      if (a.bytes != b.bytes) return a.bytes > b.bytes;
      if (a.first_call != b.first_call) return EarlierCall(idx_, a.first_call, b.first_call);
      return a.stack < b.stack;
    });
    uint64_t sum = 0;
    for (const StackTotal& st : totals_) sum += st.bytes;
    if (sum != created_bytes) {
      return absl::InternalError(absl::StrCat("stack totals (", sum,
                                              ") differ from the created bytes (", created_bytes, ")"));
    }
    return std::move(totals_);
  }

 private:
  const index::TraceIndex& idx_;
  const bool table_rss_;
  absl::flat_hash_map<StackId, size_t> slot_;  // -> index in totals_
  std::vector<StackTotal> totals_;
  std::vector<size_t> last_region_;  // per slot: the last region counted
  std::vector<uint64_t> region_bytes_;  // per slot: its bytes in that region
  absl::flat_hash_set<EventId> calls_seen_;
};

// Adds region `ra` (of `size` bytes) to the totals of `out`.
absl::Status AddRegion(RegionAttribution ra, uint64_t size, Attribution* out) {
  // Per-region parts and stack totals are bounded by this sum, so checking
  // it is enough. Disjoint regions never pass 2^64 - 1.
  if (!SumFits(out->bytes, size)) {
    return absl::OutOfRangeError(absl::StrCat(
        "the regions add up to more than 2^64 bytes: they overlap (merge them first, as "
        "attribute --regions does); region ", Hex(ra.region.start), "-", Hex(ra.region.end)));
  }
  out->bytes += size;
  out->created_bytes += ra.created_bytes();
  for (const CallBytes& c : ra.calls) out->committed_bytes += c.committed;
  out->before_trace_bytes += ra.before_trace_bytes;
  out->before_trace_committed += ra.before_trace_committed;
  out->unmapped_bytes += ra.unmapped_bytes;
  AddRss(&out->rss, ra.rss);
  AddHeapUse(&out->heap, ra.heap);
  out->regions.push_back(std::move(ra));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Attribution> Attribute(const index::TraceIndex& idx,
                                      absl::Span<const regions::Region> regions,
                                      const AttributeOptions& o) {
  Attribution out;
  ASSIGN_OR_RETURN(out.process, ChooseProcess(idx, regions, o));
  out.at = o.at;
  out.by = o.by;
  out.kinds = o.kinds;
  ASSIGN_OR_RETURN(AliveVersions alive, AliveVersions::Make(idx, out.process, o.at));
  out.snapshot = ResidentView(o.rss, idx).SnapshotFor(out.process, o.at);
  out.heap_snapshot = HeapView(o.heap, idx).SnapshotFor(out.process, o.at, ResidentView(o.rss, idx));
  out.rank_by = o.rank_by;
  Unmapped unmapped;
  const bool table_rss = std::any_of(regions.begin(), regions.end(),
                                     [](const regions::Region& r) { return r.rss.has_value(); });
  if (table_rss) out.table_rss.emplace();
  StackTotals stacks(idx, table_rss);
  for (const regions::Region& r : regions) {
    // Indexes of out.regions: regions of other kinds are not kept.
    const size_t ri = out.regions.size();
    const size_t unmapped_parts = unmapped.parts.size();
    ASSIGN_OR_RETURN(RegionAttribution ra, AttributeRegion(idx, alive, r, ri, o, out.snapshot, out.heap_snapshot, &unmapped));
    if (!o.kinds.empty() && (!ra.kind || std::find(o.kinds.begin(), o.kinds.end(), *ra.kind) == o.kinds.end())) {
      // Its unmapped parts were noted with the others; `all` keeps them,
      // which only widens the never-seen search.
      unmapped.parts.resize(unmapped_parts);
      ++out.regions_left_out;
      continue;
    }
    stacks.Add(ra, ri);
    RETURN_IF_ERROR(AddRegion(std::move(ra), r.end > r.start ? r.end - r.start : 0, &out));
    // Bounded by the sizes' sum (Rss <= Size), which AddRegion checked.
    if (out.table_rss && r.rss) {
      out.table_rss->Add(r.size(), *r.rss, r.size());
    } else if (out.table_rss) {
      out.table_rss->AddUnknown(r.size());
    }
  }
  if (!unmapped.parts.empty()) {
    const regions::RangeSet ever = EverMappedWithin(idx, out.process, o.at, unmapped.all);
    for (const auto& [ri, range] : unmapped.parts) {
      for (const auto& [gs, ge] : ever.Gaps(range.first, range.second)) {
        out.regions[ri].never_seen_bytes += ge - gs;
      }
    }
  }
  ASSIGN_OR_RETURN(out.stacks, std::move(stacks).Sorted(out.created_bytes, o.rank_by));
  return out;
}

}  // namespace pageblame::analysis

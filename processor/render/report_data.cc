#include "processor/render/report_data.h"

#include <sys/mman.h>

#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "processor/analysis/history.h"
#include "processor/analysis/kind_classifier.h"
#include "processor/analysis/resident_timeline.h"
#include "processor/analysis/resident_view.h"
#include "processor/analysis/syscall_format.h"
#include "processor/render/folded_stacks.h"
#include "processor/render/maps_report.h"

namespace pageblame::report {
namespace {

bool Accessible(const index::Version& v) { return v.attrs.prot & (PROT_READ | PROT_WRITE | PROT_EXEC); }

// "mmap at 727.537590 by 11112/11115": a call in a few words.
std::string ShortCall(const index::CallEvent& ev) {
  return absl::StrCat(std::string(decode::SyscallName(ev.syscall)), " at ", FormatTime(ev.time), " by ", ev.pid,
                      "/", ev.tid);
}

// The stacks the page names, each once, in the order first asked for.
class StackCatalog {
 public:
  StackCatalog(const index::TraceIndex& idx, OriginRenderer& r) : idx_(idx), r_(r) {}
  // -1 for no call (before the trace).
  int Index(EventId call) {
    if (!call.valid()) return -1;
    const index::CallEvent& ev = idx_.event(call);
    auto [it, inserted] = index_.try_emplace(ev.stack, static_cast<int>(stacks_.size()));
    if (inserted) {
      Json s;
      // FoldedFrames' names never hold ';' (it becomes ':'), so this splits
      // back into exactly its frames.
      s["frames"] = absl::StrSplit(FoldedFrames(idx_, r_, call), ';');
      // The label: the application's frames (app_frames.h), leaf first.
      s["summary"] = absl::StrSplit(r_.ShortStack(ev, 5), " <- ");
      s["call"] = ShortCall(ev);
      stacks_.push_back(std::move(s));
    }
    return it->second;
  }
  Json Take() { return std::move(stacks_); }

 private:
  const index::TraceIndex& idx_;
  OriginRenderer& r_;
  absl::flat_hash_map<StackId, int> index_;
  Json stacks_ = Json::array();
};

// The time axis: n + 1 boundaries from just before the first event to the
// end (index::kEndOfTrace, shown as the last event's time).
std::vector<uint64_t> Boundaries(const index::TraceStats& s, size_t n) {
  std::vector<uint64_t> t(n + 1);
  const uint64_t first = s.first_time, last = std::max(s.last_time, s.first_time);
  t[0] = first > 0 ? first - 1 : 0;
  for (size_t k = 1; k < n; ++k) t[k] = first + (last - first) * k / n;
  t[n] = index::kEndOfTrace;
  return t;
}

// The mapped and committed bytes of one stack (or of none: before the
// trace), as changes at boundaries.
struct Series {
  EventId first_call;  // earliest creating call: names the stack
  struct Change {
    size_t k;
    int64_t mapped, committed;
  };
  std::vector<Change> changes;
  uint64_t max_mapped = 0, max_committed = 0;  // at any boundary
  // Its largest committed version (else its largest): says its kind.
  const index::Version* largest = nullptr;

  void Consider(const index::Version& v) {
    auto weight = [](const index::Version& x) {
      return std::make_pair(Accessible(x), x.end - x.start);
    };
    if (largest == nullptr || weight(v) > weight(*largest)) largest = &v;
  }
  // Sorts the changes and sums those at one boundary; sets the maxima.
  void Settle() {
    std::sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) { return a.k < b.k; });
    std::vector<Change> out;
    int64_t m = 0, cm = 0;
    for (const Change& c : changes) {
      if (!out.empty() && out.back().k == c.k) {
        out.back().mapped += c.mapped;
        out.back().committed += c.committed;
      } else {
        out.push_back(c);
      }
    }
    for (const Change& c : out) {
      m += c.mapped;
      cm += c.committed;
      max_mapped = std::max<uint64_t>(max_mapped, m);
      max_committed = std::max<uint64_t>(max_committed, cm);
    }
    changes = std::move(out);
  }
  // [k, value, k, value, ...] of the boundaries where the value changes.
  Json Sparse(bool committed) const {
    Json out = Json::array();
    int64_t v = 0;
    for (const Change& c : changes) {
      const int64_t d = committed ? c.committed : c.mapped;
      if (d == 0) continue;
      v += d;
      out.push_back(c.k);
      out.push_back(v);
    }
    return out;
  }
};

bool EarlierCall(const index::TraceIndex& idx, EventId a, EventId b) {
  if (!b.valid()) return true;
  return std::make_tuple(idx.event(a).time, a.value()) < std::make_tuple(idx.event(b).time, b.value());
}

// The stacks with a series of their own, by their index in the page.
using NamedStacks = absl::flat_hash_map<StackId, int>;

Json Timeline(const index::TraceIndex& idx, uint32_t p, size_t buckets, size_t series_stacks,
              StackCatalog& catalog, KindClassifier& kinds, NamedStacks* named) {
  const std::vector<uint64_t> t = Boundaries(idx.stats(), buckets);
  // The first boundary at or after a time (t.size() if none).
  auto at_or_after = [&](uint64_t time) {
    return static_cast<size_t>(std::lower_bound(t.begin(), t.end(), time) - t.begin());
  };
  absl::flat_hash_map<StackId, Series> by_stack;
  Series before;
  std::vector<int64_t> mapped(t.size() + 1, 0), committed(t.size() + 1, 0);
  for (uint32_t i = 0; i < idx.num_versions(); ++i) {
    const index::Version& v = idx.version(VersionId(i));
    if (v.process != p || v.t_from >= v.t_to) continue;
    // Alive at boundary k iff t_from <= t[k] < t_to (t_to = kEndOfTrace: to the end).
    const size_t lo = at_or_after(v.t_from);
    const size_t hi = v.t_to == index::kEndOfTrace ? t.size() : at_or_after(v.t_to);
    if (lo >= hi) continue;  // began and ended between two boundaries
    const int64_t size = static_cast<int64_t>(v.end - v.start);
    const int64_t acc = Accessible(v) ? size : 0;
    Series& s = v.origin.valid() ? by_stack[idx.event(v.origin).stack] : before;
    if (v.origin.valid() && EarlierCall(idx, v.origin, s.first_call)) s.first_call = v.origin;
    s.Consider(v);
    s.changes.push_back({lo, size, acc});
    mapped[lo] += size;
    committed[lo] += acc;
    if (hi < t.size()) {
      s.changes.push_back({hi, -size, -acc});
      mapped[hi] -= size;
      committed[hi] -= acc;
    }
  }
  std::vector<Series*> ranked;
  for (auto& [stack, s] : by_stack) {
    s.Settle();
    ranked.push_back(&s);
  }
  before.Settle();
  // By committed bytes first: a runtime's PROT_NONE reservation (a .NET
  // GC's 48 GiB) takes no colour from the stacks that hold memory.
  std::sort(ranked.begin(), ranked.end(), [&](const Series* a, const Series* b) {
    if (a->max_committed != b->max_committed) return a->max_committed > b->max_committed;
    if (a->max_mapped != b->max_mapped) return a->max_mapped > b->max_mapped;
    return EarlierCall(idx, a->first_call, b->first_call);
  });
  if (ranked.size() > series_stacks) ranked.resize(series_stacks);

  Json out;
  Json times = Json::array(), total_m = Json::array(), total_c = Json::array();
  int64_t m = 0, c = 0;
  for (size_t k = 0; k < t.size(); ++k) {
    times.push_back(TimeSeconds(k + 1 == t.size() ? idx.stats().last_time : t[k]));
    m += mapped[k];
    c += committed[k];
    total_m.push_back(m);
    total_c.push_back(c);
  }
  Json series = Json::array();
  auto add = [&](int stack, const Series& s) {
    Json j;
    j["stack"] = stack;
    j["kind"] = s.largest ? Json(std::string(KindName(kinds.Of(*s.largest)))) : Json(nullptr);
    j["mapped"] = s.Sparse(false);
    j["committed"] = s.Sparse(true);
    series.push_back(std::move(j));
  };
  add(-1, before);
  for (const Series* s : ranked) {
    const int stack = catalog.Index(s->first_call);
    (*named)[idx.event(s->first_call).stack] = stack;
    add(stack, *s);
  }
  out["times"] = std::move(times);
  out["mapped"] = std::move(total_m);
  out["committed"] = std::move(total_c);
  out["series"] = std::move(series);
  return out;
}

Json Live(const index::TraceIndex& idx, const std::vector<VersionId>& alive, StackCatalog& catalog) {
  // Stack index -> (bytes, committed), in the order first seen.
  std::vector<std::pair<int, std::pair<uint64_t, uint64_t>>> rows;
  absl::flat_hash_map<int, size_t> slot;
  for (VersionId id : alive) {
    const index::Version& v = idx.version(id);
    const int stack = catalog.Index(v.origin);
    auto [it, inserted] = slot.try_emplace(stack, rows.size());
    if (inserted) rows.push_back({stack, {0, 0}});
    rows[it->second].second.first += v.end - v.start;
    if (Accessible(v)) rows[it->second].second.second += v.end - v.start;
  }
  Json out = Json::array();
  for (const auto& [stack, bytes] : rows) {
    out.push_back(Json{{"stack", stack}, {"bytes", bytes.first}, {"committed", bytes.second}});
  }
  return out;
}

std::string HistoryLine(const index::TraceIndex& idx, const HistoryEntry& h) {
  std::string line = absl::StrCat(FormatTime(h.time), " ", PageChangeName(h.change));
  if (h.event.valid()) {
    // The call's own time is the entry's, almost always: said once.
    const index::CallEvent& ev = idx.event(h.event);
    absl::StrAppend(&line, " by ", ev.time == h.time ? absl::StrCat(std::string(decode::SyscallName(ev.syscall)),
                                                                   " by ", ev.pid, "/", ev.tid)
                                                     : ShortCall(ev));
  }
  return line;
}

// One strip element: a region, or (on a page with too many) a run of
// neighbouring regions with one creating stack, prot and label (its commit
// and history are its first region's).
struct StripItem {
  const index::Version* first = nullptr;
  uint64_t end = 0;
  uint64_t bytes = 0;
  uint32_t count = 0;
  int origin = -1, commit = -1;
  std::string prot, label, kind;
  std::optional<uint64_t> rss;  // resident bytes, unknown without a snapshot that read them
};

Json StripItemJson(const index::TraceIndex& idx, uint32_t p, uint64_t at, size_t history_entries,
                   const StripItem& item) {
  const index::Version& v = *item.first;
  Json j;
  j["start"] = Hex(v.start);
  j["end"] = Hex(item.end);
  j["bytes"] = item.bytes;
  j["count"] = item.count;
  j["prot"] = item.prot;
  j["label"] = item.label;
  j["kind"] = item.kind;
  j["rss"] = item.rss ? Json(*item.rss) : Json(nullptr);
  j["origin"] = item.origin;
  j["origin_call"] = v.origin.valid() ? ShortCall(idx.event(v.origin)) : "before the trace";
  j["commit"] = item.commit;
  j["commit_call"] = v.commit.valid() ? ShortCall(idx.event(v.commit)) : "";
  // A run shows its first region's history: the others' differ only in
  // the calls that made them, which the run shares by its stack.
  const std::vector<HistoryEntry> h = PageLineage(idx, p, v.start, at);
  Json lines = Json::array();
  const size_t skip = h.size() > history_entries ? h.size() - history_entries : 0;
  if (skip > 0) lines.push_back(absl::StrCat("(", skip, " earlier changes)"));
  for (size_t i = skip; i < h.size(); ++i) lines.push_back(HistoryLine(idx, h[i]));
  j["history"] = std::move(lines);
  return j;
}

// `snapshot`: the residency snapshot at or before `at` (null: none).
Json Regions(const index::TraceIndex& idx, uint32_t p, uint64_t at, const std::vector<VersionId>& alive,
             const ReportOptions& o, StackCatalog& catalog, KindClassifier& kinds,
             const residency::ResidencySnapshot* snapshot) {
  // Past max_strip_regions the page would weigh MBs (a churning process
  // holds ten thousand regions): runs of alike neighbours become one element.
  const bool merge = alive.size() > o.max_strip_regions;
  Json out = Json::array();
  StripItem cur;
  for (VersionId id : alive) {
    const index::Version& v = idx.version(id);
    StripItem next;
    next.first = &v;
    next.end = v.end;
    next.bytes = v.end - v.start;
    next.count = 1;
    next.origin = catalog.Index(v.origin);
    next.commit = catalog.Index(v.commit);
    next.prot = RegionProt(v.attrs);
    next.label = RegionLabel(idx, v);
    next.kind = std::string(KindName(kinds.Of(v)));
    next.rss = ResidentView::Bytes(snapshot, v.start, v.end);
    // Not the commit stack: a churning heap's pages are each committed by
    // their own call, and the run would be the region again.
    if (merge && cur.first != nullptr && cur.end == v.start && cur.origin == next.origin &&
        cur.prot == next.prot && cur.label == next.label && cur.kind == next.kind) {
      cur.end = v.end;
      cur.bytes += next.bytes;
      AddRss(&cur.rss, next.rss);
      ++cur.count;
      continue;
    }
    if (cur.first != nullptr) out.push_back(StripItemJson(idx, p, at, o.history_entries, cur));
    cur = std::move(next);
  }
  if (cur.first != nullptr) out.push_back(StripItemJson(idx, p, at, o.history_entries, cur));
  return out;
}

Json AttributionJson(const index::TraceIndex& idx, const Attribution& a, const std::string& title,
                     StackCatalog& catalog) {
  constexpr size_t kMaxStacks = 200, kMaxRegions = 300;
  Json out;
  out["title"] = title;
  out["bytes"] = a.bytes;
  out["before_trace_bytes"] = a.before_trace_bytes;
  out["unmapped_bytes"] = a.unmapped_bytes;
  out["by"] = a.by == CreditBy::kCommit ? "commit" : "create";
  Json stacks = Json::array();
  for (size_t i = 0; i < a.stacks.size() && i < kMaxStacks; ++i) {
    const StackTotal& st = a.stacks[i];
    stacks.push_back(Json{{"stack", catalog.Index(st.first_call)}, {"bytes", st.bytes}, {"regions", st.regions}});
  }
  out["stacks"] = std::move(stacks);
  out["more_stacks"] = a.stacks.size() > kMaxStacks ? a.stacks.size() - kMaxStacks : 0;
  Json regions = Json::array();
  for (size_t i = 0; i < a.regions.size() && i < kMaxRegions; ++i) {
    const RegionAttribution& r = a.regions[i];
    Json calls = Json::array();
    for (const CallBytes& c : r.calls) calls.push_back(Json::array({catalog.Index(c.call), c.bytes}));
    regions.push_back(Json{{"start", Hex(r.region.start)}, {"end", Hex(r.region.end)},
                           {"bytes", r.region.size()}, {"before_trace_bytes", r.before_trace_bytes},
                           {"unmapped_bytes", r.unmapped_bytes}, {"stacks", std::move(calls)}});
  }
  out["regions"] = std::move(regions);
  out["more_regions"] = a.regions.size() > kMaxRegions ? a.regions.size() - kMaxRegions : 0;
  return out;
}

// {"times": [s, ...], "total": [bytes, ...], "series": [{"stack", "bytes"}]},
// or null when the process has no snapshot.
Json ResidentTimelineJson(const std::optional<ResidentTimeline>& t) {
  if (!t) return Json(nullptr);
  Json times = Json::array();
  for (uint64_t time : t->times) times.push_back(TimeSeconds(time));
  Json series = Json::array();
  for (const ResidentSeries& s : t->series) series.push_back(Json{{"stack", s.stack}, {"bytes", s.bytes}});
  Json out;
  out["times"] = std::move(times);
  out["total"] = t->total;
  out["series"] = std::move(series);
  return out;
}

}  // namespace

Json ReportData(const replay::LoadedTrace& trace, const ReportOptions& o) {
  const index::TraceIndex& idx = trace.index();
  OriginRenderer r(idx, trace.symbolizer(), o.frames);
  StackCatalog catalog(idx, r);
  KindClassifier kinds(idx, r);
  const ResidentView view(o.rss, idx);
  const index::Process& proc = idx.process(o.process);
  Json out;
  out["title"] = o.title;
  out["pid"] = proc.pid;
  out["comm"] = std::string(idx.strings().Get(proc.comm));
  out["start"] = TimeSeconds(idx.stats().first_time);
  out["end"] = TimeSeconds(idx.stats().last_time);
  out["at"] = o.at == index::kEndOfTrace ? TimeSeconds(idx.stats().last_time) : TimeSeconds(o.at);
  out["at_text"] = FormatTime(o.at);
  // Timeline first: its top stacks get the low indices (and colours).
  NamedStacks named;
  out["timeline"] =
      Timeline(idx, o.process, std::max<size_t>(o.buckets, 1), o.series_stacks, catalog, kinds, &named);
  out["resident"] = ResidentTimelineJson(
      ComputeResidentTimeline(idx, view, o.process, named, std::max<size_t>(o.buckets, 2)));
  const residency::ResidencySnapshot* snapshot = view.SnapshotFor(o.process, o.at);
  out["snapshots"] = view.has_snapshots();  // of any process of the trace
  out["strip_snapshot"] = snapshot ? Json(TimeSeconds(snapshot->time)) : Json(nullptr);
  Json lost = Json::array();
  for (const index::LostSpan& l : idx.stats().lost) {
    lost.push_back(Json{{"from", TimeSeconds(l.t_from)}, {"to", TimeSeconds(l.t_to)}, {"count", l.count}});
  }
  out["lost"] = std::move(lost);
  const std::vector<VersionId> alive = idx.RegionsAt(o.process, o.at);
  out["live"] = Live(idx, alive, catalog);
  out["region_count"] = alive.size();
  out["regions"] = Regions(idx, o.process, o.at, alive, o, catalog, kinds, snapshot);
  out["attribution"] =
      o.attribution ? AttributionJson(idx, *o.attribution, o.attribution_title, catalog) : Json(nullptr);
  out["stacks"] = catalog.Take();
  return out;
}

}  // namespace pageblame::report

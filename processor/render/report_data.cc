#include "processor/render/report_data.h"

#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "processor/analysis/attribution_methods.h"
#include "processor/analysis/method_groups.h"
#include "processor/base/format.h"
#include "processor/render/folded_stacks.h"
#include "processor/render/heap_use_text.h"
#include "processor/render/method_text.h"

namespace pageblame::render {
namespace {

// "mmap at 727.537590 by 11112/11115": a call in a few words.
std::string ShortCall(const index::CallEvent& ev) {
  return absl::StrCat(std::string(decode::SyscallName(ev.syscall)), " at ", FormatTime(ev.time), " by ", ev.pid,
                      "/", ev.tid);
}

// A method's label as the page draws it (report.js, shortName): whole up to
// 200 bytes, else its start and end around an ellipsis, cut between UTF-8
// characters. The data holds each frame name once, whole (a JIT's name can
// be a MiB): the method's whole name is in its stacks' frames (the hover).
std::string DrawnLabel(const std::string& line) {
  constexpr size_t kMax = 200, kHead = kMax - 41, kTail = 40;
  if (line.size() <= kMax) return line;
  auto continuation = [&](size_t i) { return (static_cast<unsigned char>(line[i]) & 0xC0) == 0x80; };
  size_t head = kHead, tail = line.size() - kTail;
  while (head > 0 && continuation(head)) --head;
  while (tail < line.size() && continuation(tail)) ++tail;
  return absl::StrCat(line.substr(0, head), "\u2026", line.substr(tail));
}

// The stacks the page names, each once, in the order first asked for, and
// the frame names they hold, each once: a name can be any length (a JIT's
// perf map, a C++ template), and many stacks share a frame.
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
      s["frames"] = Names(absl::StrSplit(FoldedFrames(idx_, r_, call), ';'));
      // The label: the application's frames (app_frames.h), leaf first.
      s["summary"] = Names(absl::StrSplit(r_.ShortStack(ev, 5), " <- "));
      s["call"] = ShortCall(ev);
      stacks_.push_back(std::move(s));
      calls_.push_back(call);
    }
    return it->second;
  }
  // Each stack's "method": its index in the returned "methods" (the
  // grouping of `attribute`'s first screen, method_groups.h), once every
  // stack the page names is in.
  Json TakeMethods(session::StackFrames& frames, const analysis::SummaryOptions& options) {
    Json out = Json::array();
    for (const analysis::MethodGroup& g : analysis::GroupByMethod(frames, calls_, options)) {
      Json stacks = Json::array();
      for (size_t i : g.stacks) {
        stacks_[i]["method"] = out.size();
        stacks.push_back(i);
      }
      out.push_back(Json{{"name", DrawnLabel(MethodLine(g.method))}, {"app_frame", g.method.app}, {"stacks", std::move(stacks)}});
    }
    return out;
  }
  Json TakeStacks() { return std::move(stacks_); }
  Json TakeNames() { return std::move(names_); }

 private:
  // The names' indices in names_.
  Json Names(const std::vector<absl::string_view>& names) {
    Json out = Json::array();
    for (absl::string_view n : names) {
      auto [it, inserted] = name_index_.try_emplace(std::string(n), names_.size());
      if (inserted) names_.push_back(it->first);
      out.push_back(it->second);
    }
    return out;
  }

  const index::TraceIndex& idx_;
  OriginRenderer& r_;
  absl::flat_hash_map<StackId, int> index_;
  Json stacks_ = Json::array();
  std::vector<EventId> calls_;  // each stack's first call
  absl::flat_hash_map<std::string, size_t> name_index_;
  Json names_ = Json::array();
};

Json KindJson(std::optional<analysis::RegionKind> k) {
  return k ? Json(std::string(analysis::KindName(*k))) : Json(nullptr);
}

// [k, value, k, value, ...]: the value from boundary k on.
Json StepsJson(const std::vector<analysis::TimelineStep>& steps) {
  Json out = Json::array();
  for (const analysis::TimelineStep& s : steps) {
    out.push_back(s.k);
    out.push_back(s.bytes);
  }
  return out;
}

Json SeriesJson(int stack, const analysis::StackSeries& s) {
  Json j;
  j["stack"] = stack;
  j["kind"] = s.kind ? Json(std::string(analysis::KindName(*s.kind))) : Json(nullptr);
  j["mapped"] = StepsJson(s.mapped);
  j["committed"] = StepsJson(s.committed);
  return j;
}

// The timeline's stacks get the catalog's first indices (and colours): it
// is asked first. `series_index`: each series' catalog index, in order.
Json TimelineJson(const index::TraceIndex& idx, const analysis::StackTimeline& t, StackCatalog& catalog,
                  std::vector<int>* series_index) {
  Json times = Json::array();
  for (size_t k = 0; k < t.boundaries.size(); ++k) {
    // The last boundary (index::kEndOfTrace) is shown as the last event's time.
    times.push_back(TimeSeconds(k + 1 == t.boundaries.size() ? idx.stats().last_time : t.boundaries[k]));
  }
  Json series = Json::array();
  series.push_back(SeriesJson(-1, t.before_trace));
  for (const analysis::StackSeries& s : t.stacks) {
    series_index->push_back(catalog.Index(s.first_call));
    series.push_back(SeriesJson(series_index->back(), s));
  }
  Json out;
  out["times"] = std::move(times);
  out["mapped"] = t.mapped;
  out["committed"] = t.committed;
  out["series"] = std::move(series);
  return out;
}

Json LiveJson(const std::vector<analysis::LiveStack>& live, StackCatalog& catalog) {
  Json out = Json::array();
  for (const analysis::LiveStack& l : live) {
    out.push_back(Json{{"stack", catalog.Index(l.first_call)}, {"bytes", l.bytes}, {"committed", l.committed}});
  }
  return out;
}

std::string HistoryLine(const index::TraceIndex& idx, const analysis::HistoryEntry& h) {
  std::string line = absl::StrCat(FormatTime(h.time), " ", analysis::PageChangeName(h.change));
  if (h.event.valid()) {
    // The call's own time is the entry's, almost always: said once.
    const index::CallEvent& ev = idx.event(h.event);
    absl::StrAppend(&line, " by ", ev.time == h.time ? absl::StrCat(std::string(decode::SyscallName(ev.syscall)),
                                                                   " by ", ev.pid, "/", ev.tid)
                                                     : ShortCall(ev));
  }
  return line;
}

// The latest `n` entries, after a line saying how many came before.
Json HistoryJson(const index::TraceIndex& idx, const std::vector<analysis::HistoryEntry>& h, size_t n) {
  Json lines = Json::array();
  const size_t skip = h.size() > n ? h.size() - n : 0;
  if (skip > 0) lines.push_back(absl::StrCat("(", skip, " earlier changes)"));
  for (size_t i = skip; i < h.size(); ++i) lines.push_back(HistoryLine(idx, h[i]));
  return lines;
}

Json StripRunJson(const index::TraceIndex& idx, const index::Version& v, const analysis::StripRun& run, int origin,
                  int commit, size_t history_entries) {
  Json j;
  j["start"] = Hex(v.start);
  j["end"] = Hex(run.end);
  j["bytes"] = run.bytes;
  j["count"] = run.count;
  j["prot"] = run.prot;
  j["label"] = run.label;
  j["kind"] = std::string(analysis::KindName(run.kind));
  j["rss"] = run.rss ? Json(*run.rss) : Json(nullptr);
  HeapUseJson(run.heap, run.kind, &j, /*label=*/true);
  j["origin"] = origin;
  j["origin_call"] = v.origin.valid() ? ShortCall(idx.event(v.origin)) : "before the trace";
  j["commit"] = commit;
  j["commit_call"] = v.commit.valid() ? ShortCall(idx.event(v.commit)) : "";
  j["history"] = HistoryJson(idx, run.lineage, history_entries);
  return j;
}

// Every region of a run names its creating and committing stacks in the
// catalog, in the strip's order, though the run shows its first's only.
Json StripJson(const index::TraceIndex& idx, const analysis::ReportAnalysis& a, size_t history_entries,
               StackCatalog& catalog) {
  Json out = Json::array();
  for (const analysis::StripRun& run : a.strip) {
    for (size_t i = run.first; i < run.first + run.count; ++i) {
      const index::Version& v = idx.version(a.alive[i]);
      catalog.Index(v.origin);
      catalog.Index(v.commit);
    }
    const index::Version& first = idx.version(a.alive[run.first]);
    out.push_back(StripRunJson(idx, first, run, catalog.Index(first.origin), catalog.Index(first.commit),
                               history_entries));
  }
  return out;
}

// The table's methods as `attribute`'s first screen has them
// (AttributionByMethod): each method's sums over all its stacks, regions
// shared by its stacks once.
Json AttributionMethodsJson(session::StackFrames& frames, const analysis::Attribution& a,
                            const analysis::SummaryOptions& options, StackCatalog& catalog) {
  // The page's budget (docs/report.md, "Big traces"): 200 rows, each
  // naming its top 20 stacks.
  constexpr size_t kMaxMethods = 200, kMaxStacks = 20;
  Json out = Json::array();
  for (const analysis::MethodTotal& m : analysis::AttributionByMethod(frames, a, options)) {
    if (out.size() == kMaxMethods) break;
    Json stacks = Json::array();
    for (size_t k = 0; k < m.group.stacks.size() && k < kMaxStacks; ++k) {
      stacks.push_back(catalog.Index(a.stacks[m.group.stacks[k]].first_call));
    }
    Json j{{"name", DrawnLabel(MethodLine(m.group.method))}, {"app_frame", m.group.method.app},
           {"bytes", m.total.bytes}, {"committed_bytes", m.total.committed}, {"regions", m.total.regions},
           {"stack_count", m.group.stacks.size()}, {"stacks", std::move(stacks)}, {"kind", KindJson(m.total.kind())}};
    HeapUseJson(m.total.heap, m.total.kind(), &j, /*label=*/true);
    out.push_back(std::move(j));
  }
  return out;
}

Json AttributionJson(const analysis::Attribution& a, const std::string& title, StackCatalog& catalog) {
  constexpr size_t kMaxStacks = 200, kMaxRegions = 300;
  Json out;
  out["title"] = title;
  out["bytes"] = a.bytes;
  out["before_trace_bytes"] = a.before_trace_bytes;
  out["unmapped_bytes"] = a.unmapped_bytes;
  out["by"] = a.by == analysis::CreditBy::kCommit ? "commit" : "create";
  // The heap snapshot its arena bytes are split by (as attribute --json); null: none.
  out["heap_snapshot_time"] = a.heap_snapshot ? Json(TimeSeconds(*a.heap_snapshot->time)) : Json(nullptr);
  Json stacks = Json::array();
  for (size_t i = 0; i < a.stacks.size() && i < kMaxStacks; ++i) {
    const analysis::StackTotal& st = a.stacks[i];
    Json j{{"stack", catalog.Index(st.first_call)}, {"bytes", st.bytes}, {"committed_bytes", st.committed},
           {"regions", st.regions}, {"kind", KindJson(st.kind())}};
    HeapUseJson(st.heap, st.kind(), &j, /*label=*/true);
    stacks.push_back(std::move(j));
  }
  out["stacks"] = std::move(stacks);
  out["more_stacks"] = a.stacks.size() > kMaxStacks ? a.stacks.size() - kMaxStacks : 0;
  Json regions = Json::array();
  for (size_t i = 0; i < a.regions.size() && i < kMaxRegions; ++i) {
    const analysis::RegionAttribution& r = a.regions[i];
    Json calls = Json::array();
    for (const analysis::CallBytes& c : r.calls) calls.push_back(Json::array({catalog.Index(c.call), c.bytes}));
    Json j{{"start", Hex(r.region.start)}, {"end", Hex(r.region.end)},
           {"bytes", r.region.size()}, {"before_trace_bytes", r.before_trace_bytes},
           {"unmapped_bytes", r.unmapped_bytes}, {"stacks", std::move(calls)}, {"kind", KindJson(r.kind)}};
    HeapUseJson(r.heap, r.kind, &j, /*label=*/true);
    regions.push_back(std::move(j));
  }
  out["regions"] = std::move(regions);
  out["more_regions"] = a.regions.size() > kMaxRegions ? a.regions.size() - kMaxRegions : 0;
  return out;
}

// {"times": [s, ...], "total": [bytes, ...], "series": [{"stack", "bytes"}]},
// or null when the process has no snapshot. `series_index`: the catalog
// index of each of the timeline's series.
Json ResidentTimelineJson(const std::optional<analysis::ResidentTimeline>& t, const std::vector<int>& series_index) {
  if (!t) return Json(nullptr);
  Json times = Json::array();
  for (uint64_t time : t->times) times.push_back(TimeSeconds(time));
  Json series = Json::array();
  for (const analysis::ResidentSeries& s : t->series) {
    series.push_back(Json{{"stack", s.stack < 0 ? -1 : series_index.at(s.stack)}, {"bytes", s.bytes}});
  }
  Json out;
  out["times"] = std::move(times);
  out["total"] = t->total;
  out["series"] = std::move(series);
  return out;
}

Json LostJson(const index::TraceStats& stats) {
  Json lost = Json::array();
  for (const index::LostSpan& l : stats.lost) {
    lost.push_back(Json{{"from", TimeSeconds(l.t_from)}, {"to", TimeSeconds(l.t_to)}, {"count", l.count}});
  }
  return lost;
}

}  // namespace

Json ReportData(const session::Session& trace, const ReportOptions& o, const analysis::ReportAnalysis& a) {
  const index::TraceIndex& idx = trace.index();
  OriginRenderer r(trace.frames(), o.frames);
  StackCatalog catalog(idx, r);
  const index::Process& proc = idx.process(a.process);
  Json out;
  out["title"] = o.title;
  out["pid"] = proc.pid;
  out["comm"] = std::string(idx.strings().Get(proc.comm));
  out["start"] = TimeSeconds(idx.stats().first_time);
  out["end"] = TimeSeconds(idx.stats().last_time);
  out["at"] = a.at == index::kEndOfTrace ? TimeSeconds(idx.stats().last_time) : TimeSeconds(a.at);
  out["at_text"] = FormatTime(a.at);
  std::vector<int> series_index;
  out["timeline"] = TimelineJson(idx, a.timeline, catalog, &series_index);  // first: its stacks get 0, 1, ...
  out["resident"] = ResidentTimelineJson(a.resident, series_index);
  out["snapshots"] = a.snapshots;
  out["strip_snapshot"] = a.strip_snapshot ? Json(TimeSeconds(a.strip_snapshot->time)) : Json(nullptr);
  out["heap_snapshot"] = a.heap_snapshot ? Json(TimeSeconds(*a.heap_snapshot->time)) : Json(nullptr);
  out["lost"] = LostJson(idx.stats());
  out["live"] = LiveJson(a.live, catalog);
  out["region_count"] = a.alive.size();
  out["regions"] = StripJson(idx, a, o.history_entries, catalog);
  out["attribution"] =
      o.attribution ? AttributionJson(*o.attribution, o.attribution_title, catalog) : Json(nullptr);
  if (o.attribution) {
    out["attribution"]["methods"] = AttributionMethodsJson(trace.frames(), *o.attribution, o.frames, catalog);
  }
  out["methods"] = catalog.TakeMethods(trace.frames(), o.frames);
  out["stacks"] = catalog.TakeStacks();
  out["names"] = catalog.TakeNames();
  return out;
}

}  // namespace pageblame::render

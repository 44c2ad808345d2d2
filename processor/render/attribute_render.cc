#include "processor/base/format.h"
#include "processor/render/diff_report.h"
#include "processor/analysis/resident_view.h"
#include "processor/render/attribute_render.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "processor/analysis/app_frames.h"
#include "processor/analysis/attribution_summary.h"
#include "processor/analysis/region_stacks.h"
#include "processor/analysis/reserved_stacks.h"
#include "processor/base/text_escape.h"
#include "processor/render/method_text.h"
#include "processor/render/heap_use_text.h"
#include "processor/render/rss_text.h"
#include "processor/render/text_table.h"

namespace pageblame::render {
namespace {

// For a thread stack: who started the thread, {"tid", "comm", "function"}
// (the first application frame of the creating call's stack, or null).
Json StartedByJson(const index::TraceIndex& idx, OriginRenderer& r, EventId origin) {
  if (!origin.valid()) return nullptr;
  const index::CallEvent& ev = idx.event(origin);
  Json j;
  j["tid"] = ev.tid;
  j["comm"] = std::string(idx.strings().Get(ev.comm));
  const std::vector<symbols::Frame>& frames = r.Frames(ev);
  const std::optional<size_t> app = analysis::FirstAppFrame(frames);
  j["function"] = app ? Json(analysis::SummaryName(frames[*app])) : Json(nullptr);
  return j;
}

// "rw-p /usr/lib/libc.so.6", "MEM_PRIVATE MEM_COMMIT PAGE_READWRITE <unknown> [...]":
// what the source table said about the region.
std::string RegionLabel(const regions::Region& r) {
  std::vector<std::string> parts;
  for (const std::string* s : {&r.type, &r.state, &r.protect, &r.usage}) {
    if (!s->empty()) parts.push_back(EscapeName(*s));  // a mapping's path, from the table
  }
  if (!r.merged_lines.empty()) {
    // Overlapping rows merged into one region (RegionMerger): name them all.
    parts.push_back(absl::StrCat("(lines ", r.line, ", ", absl::StrJoin(r.merged_lines, ", "), ")"));
  } else if (r.line > 0) {
    parts.push_back(absl::StrCat("(line ", r.line, ")"));
  }
  return absl::StrJoin(parts, " ");
}

Json OrNull(const std::optional<uint64_t>& n) { return n ? Json(*n) : Json(nullptr); }

// A stack's "table_rss" (exact: regions with rss it made whole) and
// "table_rss_partly" (bounds: regions it made in part, or whose rss is
// unknown); null when no region has rss.
void StackTableRss(const analysis::StackTotal& st, Json* s) {
  (*s)["table_rss"] = nullptr;
  (*s)["table_rss_partly"] = nullptr;
  if (!st.table_rss) return;
  const regions::ResidentBytes& r = *st.table_rss;
  (*s)["table_rss"] = r.rss;
  (*s)["table_rss_partly"] = PartlyJson(r, "regions");
}

// ", table rss 1.0 MiB" (+ " + 0 B to 2.0 MiB in regions made in part"), or "".
std::string StackTableRssText(const analysis::StackTotal& st) {
  if (!st.table_rss) return "";
  const regions::ResidentBytes& r = *st.table_rss;
  std::string out = absl::StrCat(", table rss ", HumanBytes(r.rss));
  if (r.partly_rows > 0) {
    absl::StrAppend(&out, " + ", HumanBytes(r.partly_at_least),
                    r.partly_at_most > r.partly_at_least ? absl::StrCat(" to ", HumanBytes(r.partly_at_most)) : "",
                    " in regions made in part");
  }
  return out;
}

std::string CallSummary(const index::TraceIndex& idx, OriginRenderer& r, EventId id) {
  const index::CallEvent& ev = idx.event(id);
  return absl::StrCat(std::string(decode::SyscallName(ev.syscall)), " at ", FormatTime(ev.time), " by ",
                      ev.pid, "/", ev.tid, ": ", r.ShortStack(ev, 4));
}

// Resident bytes: the number, or null where no snapshot read them.
Json RssJson(std::optional<uint64_t> bytes) { return bytes ? Json(*bytes) : Json(nullptr); }

Json KindJson(std::optional<analysis::RegionKind> k) { return k ? Json(std::string(analysis::KindName(*k))) : Json(nullptr); }

// A row of the first screen's table: a stack, or the total.
struct StackRow {
  std::string rank;
  uint64_t committed = 0;
  uint64_t regions = 0;
  uint64_t calls = 0;
  std::string kind;
  std::string frames;
  std::string resident;  // ResidentText
  uint64_t stacks = 0;   // a method's
  std::string in_use;    // InUseText (with a heap snapshot)
};

// A stack's (or the total's) resident bytes for the top table: from the
// trace's snapshot; else from the table's Rss column ("12.0 MiB+" when rows
// counted in part may hold more: ResidentBytes' lower bound); else "?".
std::string ResidentText(const analysis::Attribution& a, std::optional<uint64_t> rss,
                         const std::optional<regions::ResidentBytes>& table) {
  if (a.snapshot != nullptr) return HumanRss(rss);
  if (!table) return "?";
  return absl::StrCat(HumanBytes(table->at_least()), table->partly_bytes > 0 ? "+" : "");
}

// The total's in-use cell: the arena bytes in use of every region's calls.
std::string TotalInUse(const analysis::Attribution& a) { return a.heap ? HumanBytes(a.heap->in_use) : ""; }

// kArenaFootnote when a row is of a malloc arena kind (marked "*").
std::string ArenaFootnote(const std::vector<StackRow>& rows) {
  for (const StackRow& r : rows) {
    if (!r.kind.empty() && r.kind.back() == '*') return kArenaFootnote;
  }
  return "";
}

// The table's columns, in order: add one here (and its field above).
// `resident`: the trace has a snapshot for this answer; `methods`: a row
// per method (a stacks column, and the method last).
// `in_use`: the trace has a heap snapshot for this answer.
std::vector<TableColumn<StackRow>> StackColumns(bool resident, bool methods = false, bool in_use = false) {
  std::vector<TableColumn<StackRow>> columns = {
      {"#", Align::kRight, [](const StackRow& r) { return r.rank; }},
      {"committed", Align::kRight, [](const StackRow& r) { return HumanBytes(r.committed); }},
  };
  if (resident) columns.push_back({"resident", Align::kRight, [](const StackRow& r) { return r.resident; }});
  if (in_use) columns.push_back({"in use", Align::kRight, [](const StackRow& r) { return r.in_use; }});
  columns.insert(columns.end(), {
      {"regions", Align::kRight, [](const StackRow& r) { return absl::StrCat(r.regions); }},
      {"calls", Align::kRight, [](const StackRow& r) { return absl::StrCat(r.calls); }},
  });
  if (methods) columns.push_back({"stacks", Align::kRight, [](const StackRow& r) { return absl::StrCat(r.stacks); }});
  columns.insert(columns.end(), {
      {"kind", Align::kLeft, [](const StackRow& r) { return r.kind; }},
      {methods ? "app method" : "app frames", Align::kLeft, [](const StackRow& r) { return r.frames; }},
  });
  return columns;
}

// The top table: the stacks with committed bytes, most first (a.stacks is
// ranked so), then the total.
std::string TopTable(const index::TraceIndex& idx, OriginRenderer& r, const analysis::Attribution& a,
                     const analysis::AttributionSummary& sum, const TextOptions& o) {
  std::vector<StackRow> rows;
  for (size_t i = 0; i < a.stacks.size() && rows.size() < o.top_rows; ++i) {
    const analysis::StackTotal& st = a.stacks[i];
    if (st.committed == 0) continue;
    rows.push_back({absl::StrCat(i + 1), st.committed, st.regions, st.calls, ArenaKindText(st.kind()),
                    r.ShortStack(idx.event(st.first_call), 4), ResidentText(a, st.rss, st.table_rss), 0,
                    InUseText(st.heap, st.kind())});
  }
  if (sum.committed_stacks == 0) return "  no committed bytes were made by a traced call\n";
  const StackRow total{"", a.committed_bytes, sum.committed_regions, sum.calls, "",
                       absl::StrCat("total: ", sum.committed_stacks, sum.committed_stacks == 1 ? " stack" : " stacks"),
                       ResidentText(a, sum.stacks_rss, a.table_rss), 0, TotalInUse(a)};
  std::string out = RenderTable(StackColumns(a.snapshot != nullptr || a.table_rss.has_value(), false,
                                             a.heap_snapshot != nullptr),
                                rows, &total, o.width);
  absl::StrAppend(&out, MoreStacksLine(sum.committed_stacks - rows.size(), o.detail), ArenaFootnote(rows));
  return out;
}

// The first screen by method: the methods with committed bytes, ranked
// (AttributionByMethod's order), then the total.
std::string MethodTable(const analysis::Attribution& a, const std::vector<analysis::MethodTotal>& methods,
                        const analysis::AttributionSummary& sum, const TextOptions& o) {
  std::vector<StackRow> rows;
  size_t with_committed = 0;
  bool untouched_shown = false;
  for (size_t i = 0; i < methods.size(); ++i) {
    const analysis::StackTotal& t = methods[i].total;
    if (t.committed == 0) continue;
    ++with_committed;
    if (rows.size() >= o.top_rows) continue;
    untouched_shown |= analysis::MostlyUntouched(t.kind());
    rows.push_back({absl::StrCat(i + 1), t.committed, t.regions, t.calls, ArenaKindText(t.kind()),
                    MethodCell(methods[i].group.method), ResidentText(a, t.rss, t.table_rss),
                    methods[i].group.stacks.size(), InUseText(t.heap, t.kind())});
  }
  if (with_committed == 0) return "  no committed bytes were made by a traced call\n";
  const StackRow total{"", a.committed_bytes, sum.committed_regions, sum.calls, "",
                       absl::StrCat("total: ", with_committed, with_committed == 1 ? " method" : " methods"),
                       ResidentText(a, sum.stacks_rss, a.table_rss), sum.committed_stacks, TotalInUse(a)};
  std::string out = RenderTable(StackColumns(a.snapshot != nullptr || a.table_rss.has_value(), true,
                                             a.heap_snapshot != nullptr),
                                rows, &total, o.width);
  absl::StrAppend(&out, MoreMethodsLine(with_committed - rows.size(), o.detail), ArenaFootnote(rows));
  if (untouched_shown && !(a.rank_by == analysis::RankBy::kResident && a.snapshot != nullptr)) {
    absl::StrAppend(&out, "  (thread stacks rank last: without resident bytes, most of their committed bytes are "
                          "pages nobody touched)\n");
  }
  return out;
}

// The PROT_NONE part by method: what each method's stacks reserved and
// nothing committed, most first.
std::string MethodReservations(const std::vector<analysis::MethodTotal>& methods) {
  std::vector<std::pair<uint64_t, size_t>> order;  // (reserved bytes, method)
  uint64_t bytes = 0;
  for (size_t i = 0; i < methods.size(); ++i) {
    const analysis::StackTotal& t = methods[i].total;
    if (t.bytes == t.committed) continue;
    order.push_back({t.bytes - t.committed, i});
    bytes += t.bytes - t.committed;
  }
  if (order.empty()) return "";
  std::stable_sort(order.begin(), order.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  constexpr size_t kShown = 5;
  std::string out = absl::StrCat("\nreserved, not committed (PROT_NONE, not counted above): ", HumanBytes(bytes), " by ",
                                 order.size(), order.size() == 1 ? " method" : " methods", "\n");
  for (size_t k = 0; k < order.size() && k < kShown; ++k) {
    absl::StrAppend(&out, absl::StrFormat("  %10s  %s\n", HumanBytes(order[k].first),
                                          MethodLine(methods[order[k].second].group.method)));
  }
  if (order.size() > kShown) absl::StrAppend(&out, "  ... ", order.size() - kShown, " more\n");
  return out;
}

// --detail: each method's stacks (their numbers those of the stack list).
std::string MethodStacks(const index::TraceIndex& idx, OriginRenderer& r, const analysis::Attribution& a,
                         const std::vector<analysis::MethodTotal>& methods) {
  constexpr size_t kShown = 5;
  std::string out = "\neach method's stacks (numbered as in the list of stacks below):\n";
  for (size_t i = 0; i < methods.size(); ++i) {
    const analysis::MethodTotal& m = methods[i];
    absl::StrAppend(&out, "\n#", i + 1, " ", MethodLine(m.group.method), ": ", HumanBytes(m.total.committed),
                    " committed", a.snapshot ? absl::StrCat(", ", HumanRss(m.total.rss), " resident") : "", ", ",
                    m.group.stacks.size(), m.group.stacks.size() == 1 ? " stack\n" : " stacks\n");
    for (size_t k = 0; k < m.group.stacks.size() && k < kShown; ++k) {
      const size_t s = m.group.stacks[k];
      const analysis::StackTotal& st = a.stacks[s];
      absl::StrAppend(&out, absl::StrFormat("  %10s  #%-4d %s\n", HumanBytes(st.committed), s + 1,
                                            r.ShortStack(idx.event(st.first_call), 4)));
    }
    if (m.group.stacks.size() > kShown) absl::StrAppend(&out, "  ... ", m.group.stacks.size() - kShown, " more\n");
  }
  return out;
}

// The PROT_NONE part, apart: what stacks reserved and nothing committed.
// Attribution's reserved bytes are never negative (ReservedStacksOf).
std::string Reservations(const index::TraceIndex& idx, OriginRenderer& r, const analysis::Attribution& a) {
  const analysis::ReservedStacks reserved = analysis::ReservedStacksOf(a);
  const std::vector<analysis::ReservedStack>& order = reserved.stacks;
  if (order.empty()) return "";
  constexpr size_t kShown = 5;
  std::string out = absl::StrCat("\nreserved, not committed (PROT_NONE, not counted above): ",
                                 HumanBytes(static_cast<uint64_t>(reserved.bytes)), " by ", order.size(),
                                 order.size() == 1 ? " stack" : " stacks", "\n");
  for (size_t k = 0; k < order.size() && k < kShown; ++k) {
    absl::StrAppend(&out, absl::StrFormat("  %10s  #%-4d %s\n", HumanBytes(static_cast<uint64_t>(order[k].bytes)),
                                          order[k].stack + 1, r.ShortStack(idx.event(a.stacks[order[k].stack].first_call), 4)));
  }
  if (order.size() > kShown) absl::StrAppend(&out, "  ... ", order.size() - kShown, " more\n");
  return out;
}

}  // namespace

Json AttributeJson(const session::Session& trace, const analysis::Attribution& a) {
  const index::TraceIndex& idx = trace.index();
  OriginRenderer r(trace.frames());
  const char* key = a.by == analysis::CreditBy::kCommit ? "commit" : "origin";
  Json regions = Json::array();
  for (const analysis::RegionAttribution& ra : a.regions) {
    Json j;
    j["start"] = Hex(ra.region.start);
    j["end"] = Hex(ra.region.end);
    j["bytes"] = ra.region.size();
    j["kind"] = KindJson(ra.kind);
    if (ra.kind == analysis::RegionKind::kThreadStack && !ra.calls.empty()) {
      j["started_by"] = StartedByJson(idx, r, ra.calls.front().call);
    }
    Json stacks = Json::array();
    for (const analysis::CallBytes& c : ra.calls) {
      Json s;
      s["bytes"] = c.bytes;
      s["rss"] = RssJson(c.rss);
      s[key] = r.OriginJson(c.call);
      stacks.push_back(std::move(s));
    }
    j["stacks"] = std::move(stacks);
    j["before_trace_bytes"] = ra.before_trace_bytes;
    j["unmapped_bytes"] = ra.unmapped_bytes;
    j["rss"] = RssJson(ra.rss);
    j["table_rss"] = OrNull(ra.region.rss);
    HeapUseJson(ra.heap, ra.kind, &j);
    regions.push_back(std::move(j));
  }
  Json stacks = Json::array();
  for (const analysis::StackTotal& st : a.stacks) {
    Json s;
    s["bytes"] = st.bytes;
    s["rss"] = RssJson(st.rss);
    s["committed_bytes"] = st.committed;
    s["regions"] = st.regions;
    s["kind"] = KindJson(st.kind());
    HeapUseJson(st.heap, st.kind(), &s);
    StackTableRss(st, &s);
    s[key] = r.OriginJson(st.first_call);
    stacks.push_back(std::move(s));
  }
  Json out;
  out["regions"] = std::move(regions);
  out["stacks"] = std::move(stacks);
  out["rss"] = RssJson(a.rss);
  out["rss_snapshot_time"] = a.snapshot ? Json(TimeSeconds(a.snapshot->time)) : Json(nullptr);
  out["heap_snapshot_time"] = a.heap_snapshot ? Json(TimeSeconds(*a.heap_snapshot->time)) : Json(nullptr);
  return out;
}

Json AttributeJson(const session::Session& trace, const analysis::Attribution& a,
                   const std::vector<analysis::MethodTotal>& methods) {
  Json out = AttributeJson(trace, a);
  Json list = Json::array();
  for (const analysis::MethodTotal& m : methods) {
    const analysis::StackTotal& t = m.total;
    Json j;
    j["method"] = m.group.method.name;
    j["app_frame"] = m.group.method.app;
    j["context"] = m.group.method.context;
    j["bytes"] = t.bytes;
    j["committed_bytes"] = t.committed;
    j["rss"] = RssJson(t.rss);
    j["regions"] = t.regions;
    j["calls"] = t.calls;
    j["kind"] = KindJson(t.kind());
    HeapUseJson(t.heap, t.kind(), &j);
    StackTableRss(t, &j);
    j["stacks"] = m.group.stacks;
    list.push_back(std::move(j));
  }
  out["methods"] = std::move(list);
  return out;
}

namespace {

// --detail: per region, who made its bytes.
std::string RegionListing(const index::TraceIndex& idx, OriginRenderer& r, const analysis::Attribution& a,
                          const std::string& at) {
  std::string out;
  const std::vector<std::vector<analysis::RegionStack>> stacks = analysis::RegionStacks(idx, a);
  for (size_t i = 0; i < a.regions.size(); ++i) {
    const analysis::RegionAttribution& ra = a.regions[i];
    absl::StrAppend(&out, "\n", Hex(ra.region.start), "-", Hex(ra.region.end), "  ",
                    HumanBytes(ra.region.size()), "  ",
                    ra.region.rss ? absl::StrCat("rss ", HumanBytes(*ra.region.rss), "  ") : "",
                    RegionLabel(ra.region), ra.kind ? absl::StrCat("  [", analysis::KindName(*ra.kind), "]") : "", "\n");
    // One line per stack: a loop that mapped 20 pages is one line, not 20.
    for (const analysis::RegionStack& g : stacks[i]) {
      absl::StrAppend(&out, absl::StrFormat("  %10s  stack #%-4d %s%s\n", HumanBytes(g.bytes), g.rank,
                                            g.calls > 1 ? absl::StrCat(g.calls, " calls, first ") : "",
                                            CallSummary(idx, r, g.first)));
    }
    if (ra.before_trace_bytes) {
      absl::StrAppend(&out, absl::StrFormat("  %10s  existed before the trace\n", HumanBytes(ra.before_trace_bytes)));
    }
    if (ra.unmapped_bytes) {
      std::string why;
      if (ra.never_seen_bytes == ra.unmapped_bytes) {
        why = " (never seen by the trace, which cannot say whether they were mapped before it began, "
              "after it ended, or by something it does not record)";
      } else if (ra.never_seen_bytes) {
        why = absl::StrCat(" (", HumanBytes(ra.never_seen_bytes), " of it never seen by the trace)");
      }
      absl::StrAppend(&out, absl::StrFormat("  %10s  not mapped at %s%s\n", HumanBytes(ra.unmapped_bytes), at, why));
    }
  }
  return out;
}

// --detail: every stack in full, in the ranking's order.
std::string FullStacks(const index::TraceIndex& idx, OriginRenderer& r, const analysis::Attribution& a) {
  std::string out = absl::StrCat("\nstacks by bytes ",
                                 a.by == analysis::CreditBy::kCommit ? "committed (or created, if never decommitted)" : "created",
                                 ", committed first (", a.stacks.size(), " unique):\n");
  for (size_t i = 0; i < a.stacks.size(); ++i) {
    const analysis::StackTotal& st = a.stacks[i];
    const index::CallEvent& ev = idx.event(st.first_call);
    absl::StrAppend(&out, "\nstack #", i + 1, ": ", st.bytes, " bytes (", HumanBytes(st.bytes), ", ",
                    HumanBytes(st.committed), " committed",
                    a.snapshot ? absl::StrCat(", ", HumanRss(st.rss), " resident") : "",
                    st.kind() ? absl::StrCat(", ", analysis::KindName(*st.kind())) : "",
                    ") in ", st.regions, st.regions == 1 ? " region" : " regions", StackTableRssText(st), ", ", st.calls,
                    st.calls == 1 ? " call" : " calls", "; first: ", r.CallText(ev), "\n");
    absl::StrAppend(&out, r.StackText(ev, "    "));
  }
  return out;
}

}  // namespace

namespace {

// The first screen by stack, or with `methods` by method; then --detail.
std::string Text(const session::Session& trace, const analysis::Attribution& a,
                 const std::vector<analysis::MethodTotal>* methods, const TextOptions& o) {
  const index::TraceIndex& idx = trace.index();
  OriginRenderer r(trace.frames(), o.frames);
  const index::Process& proc = idx.process(a.process);
  std::string at = FormatTime(a.at);
  const analysis::AttributionSummary sum = analysis::SummarizeAttribution(a);
  std::string out = absl::StrCat(
      "pid ", proc.pid, " (", EscapeName(idx.strings().Get(proc.comm)), ") at ", at, ": ",
      a.regions.size(), " regions, ", a.bytes, " bytes (", HumanBytes(a.bytes), "): ",
      HumanBytes(a.created_bytes), a.by == analysis::CreditBy::kCommit ? " committed or created by " : " created by ",
      sum.calls, " calls with ", a.stacks.size(),
      " unique stacks, ", HumanBytes(a.before_trace_bytes), " from before the trace, ",
      HumanBytes(a.unmapped_bytes), " not mapped\n");
  if (a.snapshot != nullptr) {
    absl::StrAppend(&out, HumanRss(a.rss), " of it resident (", DescribeSnapshot(a.snapshot, a.at), ")\n");
  }
  if (!a.kinds.empty()) {
    std::vector<std::string> names;
    for (analysis::RegionKind k : a.kinds) names.emplace_back(analysis::KindName(k));
    absl::StrAppend(&out, "only regions of kind ", absl::StrJoin(names, ", "), " (", a.regions_left_out,
                    a.regions_left_out == 1 ? " region" : " regions", " of other kinds left out)\n");
  }
  absl::StrAppend(&out, methods ? "\nthe application's methods by " : "\nstacks by ", analysis::RankByWord(a.rank_by),
                  " bytes",
                  a.by == analysis::CreditBy::kCommit ? " (credited to the committing call, else the creating one):\n"
                                            : " (credited to the creating call):\n");
  if (methods) {
    absl::StrAppend(&out, MethodTable(a, *methods, sum, o), MethodReservations(*methods));
  } else {
    absl::StrAppend(&out, TopTable(idx, r, a, sum, o), Reservations(idx, r, a));
  }
  if (a.before_trace_bytes || a.unmapped_bytes) {
    absl::StrAppend(&out, "\nalso: ", HumanBytes(a.before_trace_bytes), " from before the trace (",
                    HumanBytes(a.before_trace_committed), " committed), ", HumanBytes(a.unmapped_bytes),
                    " not mapped at ", at, "\n");
  }
  if (!o.detail) return out;
  if (methods) absl::StrAppend(&out, MethodStacks(idx, r, a, *methods));
  absl::StrAppend(&out, "\nregions:\n", RegionListing(idx, r, a, at), FullStacks(idx, r, a));
  return out;
}

}  // namespace

std::string AttributeText(const session::Session& trace, const analysis::Attribution& a, const TextOptions& o) {
  return Text(trace, a, nullptr, o);
}

std::string AttributeText(const session::Session& trace, const analysis::Attribution& a,
                          const std::vector<analysis::MethodTotal>& methods, const TextOptions& o) {
  return Text(trace, a, &methods, o);
}

}  // namespace pageblame::render

#include "processor/render/growth_render.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "processor/analysis/growth_summary.h"
#include "processor/analysis/process_pids.h"
#include "processor/analysis/reserved_stacks.h"
#include "processor/analysis/resident_view.h"
#include "processor/base/format.h"
#include "processor/base/text_escape.h"
#include "processor/analysis/attribution_methods.h"
#include "processor/render/folded_stacks.h"
#include "processor/render/method_text.h"
#include "processor/render/heap_use_text.h"
#include "processor/render/json_stream.h"
#include "processor/render/rss_text.h"
#include "processor/render/text_table.h"

namespace pageblame::render {
namespace {

int64_t Diff(uint64_t from, uint64_t to) { return static_cast<int64_t>(to) - static_cast<int64_t>(from); }

// "+1.5 MiB", "-8.0 KiB", "0 B".
std::string SignedBytes(int64_t n) {
  if (n == 0) return "0 B";
  const uint64_t magnitude = n < 0 ? 0 - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
  return absl::StrCat(n < 0 ? "-" : "+", HumanBytes(magnitude));
}

// The fields every level of the JSON shares (total, before_trace, stacks).
Json BytesJson(const analysis::BytesAt& from, const analysis::BytesAt& to) {
  Json j;
  j["from_bytes"] = from.mapped;
  j["to_bytes"] = to.mapped;
  j["growth_bytes"] = Diff(from.mapped, to.mapped);
  j["from_committed_bytes"] = from.committed;
  j["to_committed_bytes"] = to.committed;
  j["growth_committed_bytes"] = Diff(from.committed, to.committed);
  j["from_regions"] = from.regions;
  j["regions"] = to.regions;
  // Resident bytes (null where no snapshot read them: docs/residency.md).
  j["from_rss"] = from.rss ? Json(*from.rss) : Json(nullptr);
  j["to_rss"] = to.rss ? Json(*to.rss) : Json(nullptr);
  j["growth_rss"] = from.rss && to.rss ? Json(Diff(*from.rss, *to.rss)) : Json(nullptr);
  return j;
}

// Arena bytes in use and free at both ends, on a stack or method of a malloc
// arena kind (or, with `always`, the total): null where an end has no heap
// snapshot.
void HeapGrowthJson(const analysis::BytesAt& from, const analysis::BytesAt& to, std::optional<analysis::RegionKind> k,
                    bool always, Json* j) {
  if (!always && !analysis::ArenaKind(k)) return;
  auto bytes = [](const std::optional<analysis::HeapUse>& u, bool in_use) {
    return u ? Json(in_use ? u->in_use : u->free) : Json(nullptr);
  };
  (*j)["from_in_use_bytes"] = bytes(from.heap, true);
  (*j)["to_in_use_bytes"] = bytes(to.heap, true);
  (*j)["growth_in_use_bytes"] = from.heap && to.heap ? Json(Diff(from.heap->in_use, to.heap->in_use)) : Json(nullptr);
  (*j)["from_free_bytes"] = bytes(from.heap, false);
  (*j)["to_free_bytes"] = bytes(to.heap, false);
}

// ", resident 1.0 MiB -> 9.0 MiB (+8.0 MiB)" when either end is known (or
// `always`: the trace has snapshots, and "? -> ?" says neither end is).
std::string RssChange(const analysis::BytesAt& from, const analysis::BytesAt& to, bool always = false) {
  if (!always && !from.rss && !to.rss) return "";
  return absl::StrCat(", resident ", HumanRss(from.rss), " -> ", HumanRss(to.rss),
                      from.rss && to.rss ? absl::StrCat(" (", SignedBytes(Diff(*from.rss, *to.rss)), ")") : "");
}

std::string Who(const index::TraceIndex& idx, const std::vector<uint32_t>& processes) {
  if (processes.size() == 1) {
    const index::Process& p = idx.process(processes[0]);
    return absl::StrCat("pid ", p.pid, " (", EscapeName(idx.strings().Get(p.comm)), ")");
  }
  return absl::StrCat(processes.size(), " processes (pids ", absl::StrJoin(analysis::ProcessPids(idx, processes), ", "), ")");
}

std::string TimeText(const index::TraceIndex& idx, uint64_t t) {
  if (t == index::kEndOfTrace) return absl::StrCat("end (", FormatTime(idx.stats().last_time), ")");
  return FormatTime(t);
}

// "pid 32336 (residency)", "pids 32331 (residency), 32336 (residency)".
std::string PidsText(const index::TraceIndex& idx, const std::vector<uint32_t>& processes) {
  std::vector<std::string> each;
  for (uint32_t p : processes) {
    const index::Process& proc = idx.process(p);
    each.push_back(absl::StrCat(proc.pid, " (", std::string(idx.strings().Get(proc.comm)), ")"));
  }
  return absl::StrCat(each.size() == 1 ? "pid " : "pids ", absl::StrJoin(each, ", "));
}

// Why resident bytes are unknown at an end where some processes have a
// snapshot and others not: one note per such end (none if every process
// had one, or the trace has no snapshots at all).
std::vector<std::string> RssNotes(const index::TraceIndex& idx, const analysis::Growth& g) {
  std::vector<std::string> notes;
  for (const bool to : {false, true}) {
    const std::vector<uint32_t>& missing = to ? g.no_snapshot_to : g.no_snapshot_from;
    if (missing.empty()) continue;
    notes.push_back(absl::StrCat("resident bytes at ", to ? "--to " : "--from ", TimeText(idx, to ? g.to : g.from),
                                 " unknown: no residency snapshot of ", PidsText(idx, missing),
                                 " at or before it; the total and every stack with bytes of ",
                                 missing.size() == 1 ? "it" : "them", " are unknown there, not summed without ",
                                 missing.size() == 1 ? "it" : "them"));
  }
  return notes;
}

std::string TableRow(const std::string& growth, const analysis::BytesAt& from, const analysis::BytesAt& to, const std::string& added,
                     const std::string& removed, const std::string& made_gone, const std::string& what) {
  return absl::StrFormat("  %11s %10s %10s %11s %10s %10s %10s %7d  %s\n", growth, HumanBytes(from.mapped),
                         HumanBytes(to.mapped), SignedBytes(Diff(from.committed, to.committed)), added, removed,
                         made_gone, to.regions, what);
}

// A row of the first screen's table: a stack, or the total.
struct GrowthRow {
  std::string rank;
  int64_t committed_growth = 0;
  uint64_t committed = 0;  // at `to`
  uint64_t regions = 0;    // at `to`
  uint64_t calls = 0;
  std::string kind;
  std::string frames;
  analysis::BytesAt from_rss_of, to_rss_of;  // only .rss is read: resident at both ends
  uint64_t stacks = 0;                       // a method's
  std::string in_use;                        // InUseGrowthText (with heap snapshots)
};

// A row's in-use growth: "" outside the arenas, "?" when an end has no heap
// snapshot, "freed; held by glibc" when less than a tenth of its arena bytes
// at `to` is in use, else the growth.
std::string InUseGrowthText(const analysis::BytesAt& from, const analysis::BytesAt& to,
                            std::optional<analysis::RegionKind> k) {
  if (!analysis::ArenaKind(k)) return "";
  if (!from.heap || !to.heap) return "?";
  if (InUseText(to.heap, k) == "freed; held by glibc") return "freed; held by glibc";
  return SignedBytes(Diff(from.heap->in_use, to.heap->in_use));
}

// The total's in-use growth, or "".
std::string TotalInUseGrowth(const analysis::BytesAt& from, const analysis::BytesAt& to) {
  return from.heap && to.heap ? SignedBytes(Diff(from.heap->in_use, to.heap->in_use)) : "";
}

// kArenaFootnote when a row is of a malloc arena kind (marked "*").
std::string ArenaFootnote(const std::vector<GrowthRow>& rows) {
  for (const GrowthRow& r : rows) {
    if (!r.kind.empty() && r.kind.back() == '*') return kArenaFootnote;
  }
  return "";
}

// "+8.0 MiB", or "?" when either end is unknown.
std::string RssGrowthText(const GrowthRow& r) {
  if (!r.from_rss_of.rss || !r.to_rss_of.rss) return "?";
  return SignedBytes(Diff(*r.from_rss_of.rss, *r.to_rss_of.rss));
}

// The table's columns, in order: add one here (and its field above).
// `resident`: a snapshot speaks for either end; `methods`: a row per method
// (a stacks column, and the method last).
// `in_use`: heap snapshots speak for both ends.
std::vector<TableColumn<GrowthRow>> GrowthColumns(bool resident, bool methods = false, bool in_use = false) {
  std::vector<TableColumn<GrowthRow>> columns = {
      {"#", Align::kRight, [](const GrowthRow& r) { return r.rank; }},
      {"committed", Align::kRight, [](const GrowthRow& r) { return SignedBytes(r.committed_growth); }},
      {"now", Align::kRight, [](const GrowthRow& r) { return HumanBytes(r.committed); }},
  };
  if (resident) {
    columns.push_back({"resident", Align::kRight, RssGrowthText});
    columns.push_back({"res now", Align::kRight, [](const GrowthRow& r) { return HumanRss(r.to_rss_of.rss); }});
  }
  if (in_use) columns.push_back({"in use", Align::kRight, [](const GrowthRow& r) { return r.in_use; }});
  columns.insert(columns.end(), {
      {"regions", Align::kRight, [](const GrowthRow& r) { return absl::StrCat(r.regions); }},
      {"calls", Align::kRight, [](const GrowthRow& r) { return absl::StrCat(r.calls); }},
  });
  if (methods) columns.push_back({"stacks", Align::kRight, [](const GrowthRow& r) { return absl::StrCat(r.stacks); }});
  columns.insert(columns.end(), {
      {"kind", Align::kLeft, [](const GrowthRow& r) { return r.kind; }},
      {methods ? "app method" : "app frames", Align::kLeft, [](const GrowthRow& r) { return r.frames; }},
  });
  return columns;
}

// Heap snapshots speak for both ends (for some process).
bool ShowsInUse(const analysis::Growth& g) { return g.heap_snapshots && g.total_from.heap && g.total_to.heap; }

// The stacks with committed bytes at either end, by committed growth (the
// order of g.stacks), then the total.
std::string TopTable(const index::TraceIndex& idx, OriginRenderer& r, const analysis::Growth& g, const TextOptions& o) {
  std::vector<GrowthRow> rows;
  for (size_t i = 0; i < g.stacks.size() && rows.size() < o.top_rows; ++i) {
    const analysis::StackGrowth& s = g.stacks[i];
    if (s.from.committed == 0 && s.to.committed == 0) continue;
    const std::optional<analysis::RegionKind> k = s.kind();
    rows.push_back({absl::StrCat(i + 1), s.committed_growth(), s.to.committed, s.to.regions, s.calls,
                    ArenaKindText(k), r.ShortStack(idx.event(s.first_call), 4), s.from, s.to, 0,
                    InUseGrowthText(s.from, s.to, k)});
  }
  const analysis::GrowthSummary sum = analysis::SummarizeGrowth(g);
  if (sum.committed_stacks == 0) return "  no traced call's committed bytes changed\n";
  const GrowthRow total{"",
                        Diff(sum.stacks_from.committed, sum.stacks_to.committed),
                        sum.stacks_to.committed,
                        sum.stacks_to.regions,
                        sum.committed_calls,
                        "",
                        absl::StrCat("total: ", sum.committed_stacks, sum.committed_stacks == 1 ? " stack" : " stacks"),
                        sum.stacks_from,
                        sum.stacks_to,
                        0,
                        TotalInUseGrowth(sum.stacks_from, sum.stacks_to)};
  std::string out = RenderTable(GrowthColumns(g.snapshots || g.total_from.rss || g.total_to.rss, false, ShowsInUse(g)),
                                rows, &total, o.width);
  absl::StrAppend(&out, MoreStacksLine(sum.committed_stacks - rows.size(), o.detail), ArenaFootnote(rows));
  return out;
}

// A snapshot speaks for either end.
bool ShowsResident(const analysis::Growth& g) { return g.snapshots || g.total_from.rss || g.total_to.rss; }

// The first screen by method: the methods with committed bytes at either
// end (GrowthByMethod's order), then the total.
std::string MethodTable(const analysis::Growth& g, const std::vector<analysis::MethodGrowth>& methods,
                        const TextOptions& o) {
  std::vector<GrowthRow> rows;
  size_t with_committed = 0;
  bool untouched_shown = false;
  for (size_t i = 0; i < methods.size(); ++i) {
    const analysis::StackGrowth& s = methods[i].total;
    if (s.from.committed == 0 && s.to.committed == 0) continue;
    ++with_committed;
    if (rows.size() >= o.top_rows) continue;
    const std::optional<analysis::RegionKind> k = s.kind();
    untouched_shown |= analysis::MostlyUntouched(k);
    rows.push_back({absl::StrCat(i + 1), s.committed_growth(), s.to.committed, s.to.regions, s.calls,
                    ArenaKindText(k), MethodCell(methods[i].group.method), s.from, s.to,
                    methods[i].group.stacks.size(), InUseGrowthText(s.from, s.to, k)});
  }
  if (with_committed == 0) return "  no traced call's committed bytes changed\n";
  const analysis::GrowthSummary sum = analysis::SummarizeGrowth(g);
  const GrowthRow total{"",
                        Diff(sum.stacks_from.committed, sum.stacks_to.committed),
                        sum.stacks_to.committed,
                        sum.stacks_to.regions,
                        sum.committed_calls,
                        "",
                        absl::StrCat("total: ", with_committed, with_committed == 1 ? " method" : " methods"),
                        sum.stacks_from,
                        sum.stacks_to,
                        sum.committed_stacks,
                        TotalInUseGrowth(sum.stacks_from, sum.stacks_to)};
  std::string out = RenderTable(GrowthColumns(ShowsResident(g), true, ShowsInUse(g)), rows, &total, o.width);
  absl::StrAppend(&out, MoreMethodsLine(with_committed - rows.size(), o.detail), ArenaFootnote(rows));
  if (untouched_shown && !(g.rank_by == analysis::RankBy::kResident && g.snapshots)) {
    absl::StrAppend(&out, "  (thread stacks rank last: without resident bytes, most of their committed bytes are "
                          "pages nobody touched)\n");
  }
  return out;
}

// What each method's reservations (PROT_NONE) did, apart from the ranking.
std::string MethodReservations(const std::vector<analysis::MethodGrowth>& methods) {
  std::vector<std::pair<int64_t, size_t>> order;  // (change of its reserved bytes, method)
  int64_t bytes = 0;
  for (size_t i = 0; i < methods.size(); ++i) {
    const analysis::StackGrowth& s = methods[i].total;
    const int64_t reserved = Diff(s.from.mapped - s.from.committed, s.to.mapped - s.to.committed);
    if (reserved == 0) continue;
    order.push_back({reserved, i});
    bytes += reserved;
  }
  if (order.empty()) return "";
  std::stable_sort(order.begin(), order.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  constexpr size_t kShown = 5;
  std::string out = absl::StrCat("\nreserved, not committed (PROT_NONE, not counted above): ", SignedBytes(bytes),
                                 " by ", order.size(), order.size() == 1 ? " method" : " methods", "\n");
  for (size_t k = 0; k < order.size() && k < kShown; ++k) {
    absl::StrAppend(&out, absl::StrFormat("  %11s  %s\n", SignedBytes(order[k].first),
                                          MethodLine(methods[order[k].second].group.method)));
  }
  if (order.size() > kShown) absl::StrAppend(&out, "  ... ", order.size() - kShown, " more\n");
  return out;
}

// --detail: each method's stacks (their numbers those of the stack list),
// a method's lines at a time.
bool MethodStacks(const index::TraceIndex& idx, OriginRenderer& r, const analysis::Growth& g,
                  const std::vector<analysis::MethodGrowth>& methods, TextPut put) {
  constexpr size_t kShown = 5;
  if (!put("\neach method's stacks (numbered as in the list of stacks below):\n")) return false;
  for (size_t i = 0; i < methods.size(); ++i) {
    const analysis::MethodGrowth& m = methods[i];
    std::string out = absl::StrCat("\n#", i + 1, " ", MethodLine(m.group.method), ": committed ",
                                   SignedBytes(m.total.committed_growth()), RssChange(m.total.from, m.total.to), ", ",
                                   m.group.stacks.size(), m.group.stacks.size() == 1 ? " stack\n" : " stacks\n");
    for (size_t k = 0; k < m.group.stacks.size() && k < kShown; ++k) {
      const size_t s = m.group.stacks[k];
      absl::StrAppend(&out, absl::StrFormat("  %11s  #%-4d %s\n", SignedBytes(g.stacks[s].committed_growth()), s + 1,
                                            r.ShortStack(idx.event(g.stacks[s].first_call), 4)));
    }
    if (m.group.stacks.size() > kShown) absl::StrAppend(&out, "  ... ", m.group.stacks.size() - kShown, " more\n");
    if (!put(out)) return false;
  }
  return true;
}

// What the reservations (PROT_NONE) did, apart from the ranking.
std::string Reservations(const index::TraceIndex& idx, OriginRenderer& r, const analysis::Growth& g) {
  const analysis::ReservedStacks reserved = analysis::ReservedStacksOf(g);
  const std::vector<analysis::ReservedStack>& order = reserved.stacks;
  if (order.empty()) return "";
  constexpr size_t kShown = 5;
  std::string out = absl::StrCat("\nreserved, not committed (PROT_NONE, not counted above): ", SignedBytes(reserved.bytes),
                                 " by ", order.size(), order.size() == 1 ? " stack" : " stacks", "\n");
  for (size_t k = 0; k < order.size() && k < kShown; ++k) {
    absl::StrAppend(&out, absl::StrFormat("  %11s  #%-4d %s\n", SignedBytes(order[k].bytes), order[k].stack + 1,
                                          r.ShortStack(idx.event(g.stacks[order[k].stack].first_call), 4)));
  }
  if (order.size() > kShown) absl::StrAppend(&out, "  ... ", order.size() - kShown, " more\n");
  return out;
}

}  // namespace

double GrowthTimeSeconds(const index::TraceIndex& idx, uint64_t t) {
  return TimeSeconds(t == index::kEndOfTrace ? idx.stats().last_time : t);
}

namespace {

// A stack's (or a method's) growth fields, after what `j` holds.
void AddGrowthFields(const analysis::StackGrowth& s, Json* j) {
  const Json bytes = BytesJson(s.from, s.to);  // kept: items() does not own it
  for (const auto& [key, value] : bytes.items()) (*j)[key] = value;
  (*j)["added_bytes"] = s.added;
  (*j)["removed_bytes"] = s.removed;
  (*j)["made_gone_bytes"] = s.made_gone;
  (*j)["calls"] = s.calls;
  const std::optional<analysis::RegionKind> kind = s.kind();
  (*j)["kind"] = kind ? Json(std::string(analysis::KindName(*kind))) : Json(nullptr);
  HeapGrowthJson(s.from, s.to, kind, false, j);
}

Json StackJson(OriginRenderer& r, const char* key, const analysis::StackGrowth& s) {
  Json j = Json::object();
  AddGrowthFields(s, &j);
  j[key] = r.OriginJson(s.first_call);
  return j;
}

Json MethodsJson(const std::vector<analysis::MethodGrowth>& methods) {
  Json list = Json::array();
  for (const analysis::MethodGrowth& m : methods) {
    Json j;
    j["method"] = m.group.method.name;
    j["app_frame"] = m.group.method.app;
    j["context"] = m.group.method.context;
    AddGrowthFields(m.total, &j);
    j["stacks"] = m.group.stacks;
    list.push_back(std::move(j));
  }
  return list;
}

// All of the answer but the stacks' objects: "stacks" is [], in its place;
// "methods" (when given) before "notes", which stays last.
Json Head(const session::Session& trace, const analysis::Growth& g,
          const std::vector<analysis::MethodGrowth>* methods) {
  const index::TraceIndex& idx = trace.index();
  Json out;
  out["from"] = GrowthTimeSeconds(idx, g.from);
  out["to"] = GrowthTimeSeconds(idx, g.to);
  out["total"] = BytesJson(g.total_from, g.total_to);
  HeapGrowthJson(g.total_from, g.total_to, std::nullopt, g.heap_snapshots, &out["total"]);
  out["before_trace"] = BytesJson(g.before_from, g.before_to);
  out["stacks"] = Json::array();
  if (methods != nullptr) out["methods"] = MethodsJson(*methods);
  out["notes"] = RssNotes(idx, g);
  return out;
}

const char* OriginKey(const analysis::Growth& g) { return g.by == analysis::CreditBy::kCommit ? "commit" : "origin"; }

Json Whole(const session::Session& trace, const analysis::Growth& g,
           const std::vector<analysis::MethodGrowth>* methods) {
  Json out = Head(trace, g, methods);
  OriginRenderer r(trace.frames());
  for (const analysis::StackGrowth& s : g.stacks) out["stacks"].push_back(StackJson(r, OriginKey(g), s));
  return out;
}

}  // namespace

Json GrowthJson(const session::Session& trace, const analysis::Growth& g) { return Whole(trace, g, nullptr); }

Json GrowthJson(const session::Session& trace, const analysis::Growth& g,
                const std::vector<analysis::MethodGrowth>& methods) {
  return Whole(trace, g, &methods);
}

bool WriteGrowthJson(const session::Session& trace, const analysis::Growth& g,
                     const std::vector<analysis::MethodGrowth>& methods, std::FILE* out) {
  OriginRenderer r(trace.frames());
  return WriteJsonStreamed(Head(trace, g, &methods), "stacks", g.stacks.size(),
                           [&](size_t i) { return StackJson(r, OriginKey(g), g.stacks[i]); }, out);
}

namespace {

// The first lines: the totals, the first screen's table, the reservations.
std::string TextHead(const index::TraceIndex& idx, OriginRenderer& r, const analysis::Growth& g,
                     const std::vector<analysis::MethodGrowth>* methods, const TextOptions& o) {
  std::string out = absl::StrCat(
      "growth of ", Who(idx, g.processes), " from ", TimeText(idx, g.from), " to ", TimeText(idx, g.to), ": mapped ",
      HumanBytes(g.total_from.mapped), " -> ", HumanBytes(g.total_to.mapped), " (",
      SignedBytes(Diff(g.total_from.mapped, g.total_to.mapped)), "), committed ",
      HumanBytes(g.total_from.committed), " -> ", HumanBytes(g.total_to.committed), " (",
      SignedBytes(Diff(g.total_from.committed, g.total_to.committed)), ")", RssChange(g.total_from, g.total_to, g.snapshots),
      "\n",
      "each page is credited to the call that ",
      g.by == analysis::CreditBy::kCommit ? "committed it (else the one that created it)" : "created it", "; ",
      g.stacks.size(), " stacks\n");
  for (const std::string& note : RssNotes(idx, g)) absl::StrAppend(&out, "note: ", note, "\n");
  if (!g.kinds.empty()) {
    std::vector<std::string> names;
    for (analysis::RegionKind k : g.kinds) names.emplace_back(analysis::KindName(k));
    absl::StrAppend(&out, "only memory of kind ", absl::StrJoin(names, ", "), "\n");
  }
  if (methods) {
    absl::StrAppend(&out, "\nthe application's methods by ", analysis::RankByWord(g.rank_by), " growth:\n",
                    MethodTable(g, *methods, o), MethodReservations(*methods));
  } else {
    absl::StrAppend(&out, "\nstacks by ", analysis::RankByWord(g.rank_by), " growth:\n", TopTable(idx, r, g, o),
                    Reservations(idx, r, g));
  }
  if (g.before_from.mapped != 0 || g.before_to.mapped != 0) {
    absl::StrAppend(&out, "\nalso: from before the trace, committed ", HumanBytes(g.before_from.committed), " -> ",
                    HumanBytes(g.before_to.committed), "\n");
  }
  return out;
}

// --detail's table of every stack, a row at a time, then "[before trace]".
bool StackRows(const index::TraceIndex& idx, OriginRenderer& r, const analysis::Growth& g, TextPut put) {
  if (!put(absl::StrCat("\nevery stack, mapped bytes:\n",
                        absl::StrFormat("  %11s %10s %10s %11s %10s %10s %10s %7s  %s\n", "growth", "from", "to",
                                        "committed", "added", "removed", "made+gone", "regions", "stack")))) {
    return false;
  }
  for (size_t i = 0; i < g.stacks.size(); ++i) {
    const analysis::StackGrowth& s = g.stacks[i];
    if (!put(TableRow(SignedBytes(s.growth()), s.from, s.to, HumanBytes(s.added), HumanBytes(s.removed),
                      HumanBytes(s.made_gone), absl::StrCat("#", i + 1, " ", r.ShortStack(idx.event(s.first_call), 4))))) {
      return false;
    }
  }
  if (g.total_from.mapped == 0 && g.total_to.mapped == 0) return true;
  return put(TableRow(SignedBytes(Diff(g.before_from.mapped, g.before_to.mapped)), g.before_from, g.before_to, "-",
                      "-", "-", "[before trace]"));
}

// The text, a row per stack or, with `methods`, per method, a piece at a time.
bool Text(const session::Session& trace, const analysis::Growth& g, const std::vector<analysis::MethodGrowth>* methods,
          const TextOptions& o, TextPut put) {
  const index::TraceIndex& idx = trace.index();
  OriginRenderer r(trace.frames(), o.frames);
  if (!put(TextHead(idx, r, g, methods, o))) return false;
  if (!o.detail) return true;
  if (methods && !MethodStacks(idx, r, g, *methods, put)) return false;
  if (!StackRows(idx, r, g, put)) return false;
  for (size_t i = 0; i < g.stacks.size(); ++i) {
    const analysis::StackGrowth& s = g.stacks[i];
    const index::CallEvent& ev = idx.event(s.first_call);
    if (!put(absl::StrCat("\nstack #", i + 1, ": ", SignedBytes(s.growth()), " (", HumanBytes(s.from.mapped), " -> ",
                          HumanBytes(s.to.mapped), "; committed ", SignedBytes(s.committed_growth()),
                          RssChange(s.from, s.to), "); first: ", r.CallText(ev), "\n", r.StackText(ev, "    ")))) {
      return false;
    }
  }
  return true;
}

std::string WholeText(const session::Session& trace, const analysis::Growth& g,
                      const std::vector<analysis::MethodGrowth>* methods, const TextOptions& o) {
  std::string out;
  Text(trace, g, methods, o, [&](std::string_view piece) {
    out.append(piece);
    return true;
  });
  return out;
}

}  // namespace

std::string GrowthText(const session::Session& trace, const analysis::Growth& g, const TextOptions& o) {
  return WholeText(trace, g, nullptr, o);
}

std::string GrowthText(const session::Session& trace, const analysis::Growth& g,
                       const std::vector<analysis::MethodGrowth>& methods, const TextOptions& o) {
  return WholeText(trace, g, &methods, o);
}

bool WriteGrowthText(const session::Session& trace, const analysis::Growth& g,
                     const std::vector<analysis::MethodGrowth>* methods, const TextOptions& o, TextPut put) {
  return Text(trace, g, methods, o, put);
}

// Merging stays in render: which stacks become one line depends only on how
// their frames are printed (FoldedFrames), not on anything the index says.
std::string GrowthFolded(const session::Session& trace, const analysis::Growth& g) {
  const index::TraceIndex& idx = trace.index();
  OriginRenderer r(trace.frames());
  std::map<std::string, std::pair<uint64_t, uint64_t>> lines;  // frames -> (from, to)
  std::vector<std::string> order;
  for (const analysis::StackGrowth& s : g.stacks) {
    auto [it, inserted] = lines.try_emplace(FoldedFrames(idx, r, s.first_call));
    if (inserted) order.push_back(it->first);
    it->second.first += s.from.mapped;
    it->second.second += s.to.mapped;
  }
  std::string out;
  for (const std::string& frames : order) {
    const auto& [from, to] = lines[frames];
    if (from == 0 && to == 0) continue;  // churn only: nothing to draw
    absl::StrAppend(&out, frames, " ", from, " ", to, "\n");
  }
  if (g.before_from.mapped != 0 || g.before_to.mapped != 0) {
    absl::StrAppend(&out, "[before trace] ", g.before_from.mapped, " ", g.before_to.mapped, "\n");
  }
  return out;
}

}  // namespace pageblame::render

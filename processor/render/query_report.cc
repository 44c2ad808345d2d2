#include "processor/render/query_report.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "processor/analysis/heap_split.h"
#include "processor/analysis/history.h"
#include "processor/analysis/region_label.h"
#include "processor/analysis/resident_view.h"
#include "processor/analysis/syscall_format.h"
#include "processor/base/format.h"
#include "processor/base/text_escape.h"
#include "processor/render/json_stream.h"
#include "processor/render/rss_text.h"

namespace pageblame::render {
namespace {

// Attach mode without -d (QueryAnswer::unknown_break): a heap page below
// the new break with no known version may have been made by that call or
// may predate the trace; say so.
std::string UnknownBreakNote(const index::TraceIndex& idx, EventId call) {
  if (!call.valid()) return "";
  const index::CallEvent& ev = idx.event(call);
  return absl::StrCat("if this is a heap page: brk at ", FormatTime(ev.time), " set the break to ",
                      Hex(static_cast<uint64_t>(ev.ret)),
                      " from a value the trace never saw (attached without -d), so it may have "
                      "been created by that call or before the trace; record with "
                      "`perf trace record -d ...` to know");
}

Json RangeJson(uint64_t start, uint64_t end) {
  Json j;
  j["start"] = Hex(start);
  j["end"] = Hex(end);
  return j;
}

}  // namespace

std::string RegionText(const index::TraceIndex& idx, const index::Version& v, OriginRenderer& r,
                       const std::function<std::string(const index::CallEvent&)>& stack_text) {
  const index::Process& proc = idx.process(v.process);
  std::string out = absl::StrCat("  region ", Hex(v.start), "-", Hex(v.end), " ",
                                 analysis::RegionProt(v.attrs), " ", HumanBytes(v.end - v.start), " ",
                                 EscapeName(analysis::RegionLabel(idx, v)), "\n");
  if (v.origin.valid()) {
    const index::CallEvent& ev = idx.event(v.origin);
    absl::StrAppend(&out, "  created by ", analysis::DescribeCall(ev), "\n  at ", FormatTime(ev.time),
                    " by ", EscapeName(idx.strings().Get(ev.comm)), " ", ev.pid, "/", ev.tid, "\n",
                    stack_text(ev));
  } else {
    absl::StrAppend(&out, "  existed before the trace: no event in the trace created it",
                    proc.existed_before_trace ? " (attach mode: the process was already running)"
                                              : " (mapped by the kernel at exec)",
                    "\n");
  }
  if (v.commit.valid()) {
    const index::CallEvent& ev = idx.event(v.commit);
    absl::StrAppend(&out, "  committed by ", analysis::DescribeCall(ev), "\n  at ", FormatTime(ev.time),
                    " by ", EscapeName(idx.strings().Get(ev.comm)), " ", ev.pid, "/", ev.tid,
                    "\n", stack_text(ev));
  } else if (v.attrs.prot_known && (v.attrs.prot & 7) == 0) {
    absl::StrAppend(&out, "  reserved (PROT_NONE): not committed\n");
  }
  if (v.begin == index::Begin::kMovedIn && v.begin_event.valid()) {
    absl::StrAppend(&out, "  moved here by ", r.CallText(idx.event(v.begin_event)), "\n");
  }
  return out;
}

namespace {

// {"state": "resident"|"swapped"|"not resident", "snapshot_time": s,
// "region_rss": bytes|null}, or null when no snapshot read the page.
Json ResidentJson(const analysis::QueryAnswer& a) {
  if (!a.page_state) return nullptr;
  Json j;
  j["state"] = *a.page_state;
  j["snapshot_time"] = TimeSeconds(a.snapshot->time);
  j["region_rss"] = a.region_rss ? Json(*a.region_rss) : Json(nullptr);
  return j;
}

// Inside malloc's arenas: {"snapshot_time", "page_in_use_bytes",
// "page_free_bytes", "in_use_bytes", "free_bytes"} (the page, then the
// region) at the heap snapshot, or null without one; the bytes are null
// where the snapshot does not know them (the region was made after it).
// Absent for other kinds.
void AddHeapJson(const analysis::QueryAnswer& a, Json* j) {
  if (!analysis::ArenaKind(a.kind)) return;
  if (!a.heap_snapshot) {
    (*j)["heap"] = nullptr;
    return;
  }
  auto bytes = [](const std::optional<analysis::HeapUse>& u, uint64_t analysis::HeapUse::*field) {
    return u ? Json((*u).*field) : Json(nullptr);
  };
  Json h;
  h["snapshot_time"] = a.heap_snapshot->time ? Json(TimeSeconds(*a.heap_snapshot->time)) : Json(nullptr);
  h["page_in_use_bytes"] = bytes(a.page_heap, &analysis::HeapUse::in_use);
  h["page_free_bytes"] = bytes(a.page_heap, &analysis::HeapUse::free);
  h["in_use_bytes"] = bytes(a.region_heap, &analysis::HeapUse::in_use);
  h["free_bytes"] = bytes(a.region_heap, &analysis::HeapUse::free);
  (*j)["heap"] = std::move(h);
}

// What the page's bytes are to glibc: all free, all in use, or both.
std::string PageUse(const analysis::HeapUse& u) {
  if (u.in_use == 0 && u.free == 0) return "not split (not committed)";
  if (u.in_use == 0) return "free, held by glibc";
  if (u.free == 0) return "in use";
  return absl::StrCat(HumanBytes(u.in_use), " in use, ", HumanBytes(u.free), " free held by glibc");
}

}  // namespace

// Inside malloc's arenas, when the trace has heap snapshots: what of the
// page and of its region is in use or free at the snapshot; the stacks above
// made the page usable, not every chunk on it.
std::string HeapText(const analysis::QueryAnswer& a, bool snapshots) {
  if (!snapshots || !analysis::ArenaKind(a.kind)) return "";
  if (!a.heap_snapshot) return "  in use / free unknown: no heap snapshot of this process at or before then\n";
  if (!a.page_heap || !a.region_heap) {
    return absl::StrCat("  in use / free unknown: the region was made after the heap snapshot at ",
                        a.heap_snapshot->time ? FormatTime(*a.heap_snapshot->time) : "?", "\n");
  }
  return absl::StrCat("  inside malloc's arena (heap snapshot at ",
                      a.heap_snapshot->time ? FormatTime(*a.heap_snapshot->time) : "?", "): the page ",
                      PageUse(*a.page_heap), "; the region ", HumanBytes(a.region_heap->in_use), " in use, ",
                      HumanBytes(a.region_heap->free), " free held by glibc (its chunks may be any malloc's)\n");
}

std::string ResidentText(const analysis::QueryAnswer& a, bool snapshots) {
  if (!snapshots || !a.process) return "";
  if (!a.page_state) {
    return a.snapshot == nullptr ? "  residency unknown: no snapshot of this process at or before then\n"
                                 : absl::StrCat("  residency unknown: the snapshot at ", FormatTime(a.snapshot->time),
                                                " did not read this page (no access then, or not mapped yet)\n");
  }
  const std::string region =
      a.version.valid() ? absl::StrCat("; ", HumanRss(a.region_rss), " of the region resident") : "";
  return absl::StrCat("  ", *a.page_state, " (snapshot at ", FormatTime(a.snapshot->time), region, ")\n");
}

namespace {

Json HistoryJson(const index::TraceIndex& idx, OriginRenderer& r, const analysis::QueryAnswer& a) {
  Json hist = Json::array();
  if (!a.process) return hist;
  for (const analysis::HistoryEntry& h : a.lineage) {
    const index::Version& v = idx.version(h.version);
    Json e;
    e["time"] = TimeSeconds(h.time);
    e["change"] = analysis::PageChangeName(h.change);
    e["pid"] = idx.process(v.process).pid;
    e["region"] = RangeJson(v.start, v.end);
    if (h.event.valid()) {
      const index::CallEvent& ev = idx.event(h.event);
      e["call"] = analysis::DescribeCall(ev);
      e["tid"] = ev.tid;
      e["comm"] = std::string(idx.strings().Get(ev.comm));
      e["stack"] = r.StackJson(ev);
    } else {
      e["call"] = nullptr;
    }
    if ((h.change == analysis::PageChange::kMovedIn || h.change == analysis::PageChange::kForked) && v.prev.valid()) {
      const index::Version& from = idx.version(v.prev);
      e["from"] = RangeJson(from.start, from.end);
      e["from_pid"] = idx.process(from.process).pid;
    }
    hist.push_back(std::move(e));
  }
  return hist;
}

Json AnswerJson(const index::TraceIndex& idx, OriginRenderer& r, const analysis::QueryAnswer& a) {
  Json j;
  j["address"] = Hex(a.address);
  j["pid"] = a.process ? Json(idx.process(*a.process).pid) : Json(nullptr);
  j["resident"] = a.process ? ResidentJson(a) : Json(nullptr);
  AddHeapJson(a, &j);
  if (a.version.valid()) {
    const index::Version& v = idx.version(a.version);
    j["region"] = RangeJson(v.start, v.end);
    j["origin"] = r.OriginJson(v.origin);
    j["commit"] = r.OriginJson(v.commit);
  } else {
    j["region"] = nullptr;
    j["origin"] = nullptr;
    j["commit"] = nullptr;
    std::string note = UnknownBreakNote(idx, a.unknown_break);
    if (!note.empty()) j["note"] = note;
  }
  j["history"] = HistoryJson(idx, r, a);
  return j;
}

}  // namespace

Json QueryJson(const session::Session& trace, const analysis::QueryOptions& options,
               const std::vector<analysis::QueryAnswer>& answers) {
  OriginRenderer r(trace.frames());
  Json out = Json::array();
  for (const analysis::QueryAnswer& a : answers) out.push_back(AnswerJson(trace.index(), r, a));
  return out;
}

bool WriteQueryJson(const session::Session& trace, const analysis::QueryOptions& options,
                    const std::vector<analysis::QueryAnswer>& answers, std::FILE* out) {
  OriginRenderer r(trace.frames());
  return WriteJsonArrayStreamed(
      answers.size(), [&](size_t i) { return AnswerJson(trace.index(), r, answers[i]); }, out);
}

std::string GoneText(const index::TraceIndex& idx, OriginRenderer& r, const std::vector<analysis::HistoryEntry>& lineage) {
  if (lineage.empty()) return "";
  const analysis::HistoryEntry& gone = lineage.back();
  const index::Version& v = idx.version(gone.version);
  return absl::StrCat("  not mapped; it was in [", Hex(v.start), "-", Hex(v.end), ") until ",
                      FormatTime(gone.time), ", ", analysis::PageChangeName(gone.change),
                      gone.event.valid() ? absl::StrCat(" by ", r.CallText(idx.event(gone.event))) : "",
                      "\n");
}

namespace {

std::string HistoryLine(const index::TraceIndex& idx, OriginRenderer& r, const analysis::HistoryEntry& h) {
  const index::Version& v = idx.version(h.version);
  return absl::StrCat("    ", FormatTime(h.time), " pid ", idx.process(v.process).pid, " ",
                      analysis::PageChangeName(h.change), " [", Hex(v.start), "-", Hex(v.end), ")",
                      h.event.valid() ? absl::StrCat(" by ", r.CallText(idx.event(h.event))) : "", "\n");
}

// A split is a call on another page of the region cutting it; a .NET GC
// reservation is cut hundreds of times, which would bury the page's own
// few changes. A run of more than kShownSplits splits shows its first and
// last and counts the others (the JSON lists each).
constexpr size_t kShownSplits = 3;

std::string HistoryText(const index::TraceIndex& idx, OriginRenderer& r,
                        const std::vector<analysis::HistoryEntry>& lineage) {
  std::string out = "  history of this page:\n";
  for (size_t i = 0; i < lineage.size();) {
    size_t run = 0;
    while (i + run < lineage.size() && lineage[i + run].change == analysis::PageChange::kSplit) ++run;
    if (run <= kShownSplits) {
      for (size_t k = 0; k < std::max<size_t>(run, 1); ++k) absl::StrAppend(&out, HistoryLine(idx, r, lineage[i + k]));
      i += std::max<size_t>(run, 1);
      continue;
    }
    absl::StrAppend(&out, HistoryLine(idx, r, lineage[i]), "    ... ", run - 2,
                    " more splits of its region by calls on other pages (--json lists each)\n",
                    HistoryLine(idx, r, lineage[i + run - 1]));
    i += run;
  }
  return out;
}

}  // namespace

std::string QueryText(const session::Session& trace, const analysis::QueryOptions& options,
                      const std::vector<analysis::QueryAnswer>& answers) {
  const index::TraceIndex& idx = trace.index();
  OriginRenderer r(trace.frames());
  const bool snapshots = analysis::ResidentView(options.rss, idx).has_snapshots();
  const bool heap_snapshots = analysis::HeapView(options.heap, idx).has_snapshots();
  std::string out;
  const std::string at = options.at == index::kEndOfTrace ? "at the end of the trace"
                                                    : absl::StrCat("at ", FormatTime(options.at));
  for (const analysis::QueryAnswer& a : answers) {
    if (!out.empty()) out += "\n";
    if (!a.process) {
      absl::StrAppend(&out, Hex(a.address), ": not mapped in any traced process ", at, "\n");
      continue;
    }
    const index::Process& proc = idx.process(*a.process);
    absl::StrAppend(&out, Hex(a.address), " in pid ", proc.pid, " (",
                    EscapeName(idx.strings().Get(proc.comm)), ") ", at, "\n");
    const std::vector<analysis::HistoryEntry>& lineage = a.lineage;
    if (!a.version.valid() && !lineage.empty()) {
      absl::StrAppend(&out, GoneText(idx, r, lineage));
      if (!options.history) absl::StrAppend(&out, "  (--history for the whole story of the page)\n");
    } else if (!a.version.valid()) {
      absl::StrAppend(&out, "  not mapped", proc.existed_before_trace
                                                ? " (or mapped before the trace began: this is an "
                                                  "attach-mode recording and no event touched it)"
                                                : "",
                      "\n");
      std::string note = UnknownBreakNote(idx, a.unknown_break);
      if (!note.empty()) absl::StrAppend(&out, "  note: ", note, "\n");
    } else {
      absl::StrAppend(&out, RegionText(idx, idx.version(a.version), r,
                                       [&](const index::CallEvent& ev) {
                                         return r.StackText(ev, "    ");
                                       }));
    }
    absl::StrAppend(&out, ResidentText(a, snapshots));
    absl::StrAppend(&out, HeapText(a, heap_snapshots));
    if (options.history) absl::StrAppend(&out, HistoryText(idx, r, lineage));
  }
  return out;
}

}  // namespace pageblame::render

#include "processor/render/maps_report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "processor/analysis/region_label.h"
#include "processor/analysis/syscall_format.h"
#include "processor/base/format.h"
#include "processor/base/text_escape.h"
#include "processor/render/rss_text.h"

namespace pageblame::render {
namespace {

// One region's object, as DumpJson lays it out at depth 1. "prot" is "???"
// where the trace cannot know it (a mapping perf reported without it), as
// in the text.
void AppendRegionJson(const index::TraceIndex& idx, OriginRenderer& r, uint32_t pid, const analysis::MapsRegion& region,
                      std::string* text) {
  const index::Version& v = idx.version(region.version);
  absl::StrAppend(text, "\n  \"pid\": ", pid, ",\n  \"start\": \"", Hex(v.start), "\",\n  \"end\": \"", Hex(v.end),
                  "\",\n  \"prot\": \"", analysis::RegionProt(v.attrs), "\",\n  \"path\": ");
  std::string_view path = idx.strings().Get(v.attrs.path);
  if (path.empty()) {
    absl::StrAppend(text, "null");
  } else {
    AppendJsonString(text, path);
  }
  absl::StrAppend(text, ",\n  \"rss\": ", JsonRss(region.rss), ",\n  \"kind\": \"", analysis::KindName(region.kind),
                  "\"");
  // Malloc arena kinds: in use and free (null without a heap snapshot).
  if (analysis::ArenaKind(region.kind)) {
    absl::StrAppend(text, ",\n  \"in_use_bytes\": ", region.heap ? absl::StrCat(region.heap->in_use) : "null",
                    ",\n  \"free_bytes\": ", region.heap ? absl::StrCat(region.heap->free) : "null");
  }
  absl::StrAppend(text, ",\n  \"origin\": ");
  r.AppendOriginJson(text, v.origin, 2);
  absl::StrAppend(text, ",\n  \"commit\": ");
  r.AppendOriginJson(text, v.commit, 2);
}

// What a row says of the calls behind its versions: the one that made the
// most bytes, and how many calls and stacks there were.
std::string RunCallsText(const index::TraceIndex& idx, OriginRenderer& r, const analysis::RunCalls& calls, bool commit) {
  if (!calls.top.valid()) return commit ? "" : "existed before the trace";
  const index::CallEvent& ev = idx.event(calls.top);
  std::string out = absl::StrCat(commit ? "committed by " : "", std::string(decode::SyscallName(ev.syscall)), " at ",
                                 FormatTime(ev.time), " by ", ev.tid, ": ", r.ShortStack(ev, 4));
  if (calls.calls > 1) {
    absl::StrAppend(&out, " (+", calls.calls - 1, calls.calls == 2 ? " more call" : " more calls",
                    calls.stacks > 1 ? absl::StrCat(", ", calls.stacks, " stacks") : "", ")");
  }
  return out;
}

std::string Heading(const index::TraceIndex& idx, const analysis::MapsAnswer& a, const analysis::ProcessMaps& pm) {
  const index::Process& proc = idx.process(pm.process);
  std::string out = absl::StrCat(
      "pid ", proc.pid, " (", EscapeName(idx.strings().Get(proc.comm)), ")",
      proc.t_exit != index::kEndOfTrace ? absl::StrCat(", exited at ", FormatTime(proc.t_exit)) : "", ": ",
      pm.runs.size(), a.split ? " region versions" : " regions", " at ", FormatTime(a.at), "; ",
      HumanBytes(pm.created_bytes), " created during the trace, ", HumanBytes(pm.before_trace_bytes),
      " from before it\n");
  if (a.snapshots) {
    absl::StrAppend(&out, "  resident: ", DescribeSnapshot(pm.snapshot, a.at), "; ", HumanRss(pm.rss),
                    " resident in these regions\n",
                    absl::StrFormat("  %-25s %s %10s %10s  %-28s %-12s %s\n", "range", "prot", "size", "resident",
                                    "mapping", "kind", "origin"));
  }
  return out;
}

std::string RunRow(const index::TraceIndex& idx, OriginRenderer& r, const analysis::MapsAnswer& a, const analysis::ProcessMaps& pm,
                   const analysis::RegionRun& run) {
  const index::Version& first = idx.version(pm.regions[run.first].version);
  std::string origin = RunCallsText(idx, r, run.origin, /*commit=*/false);
  const std::string commit = RunCallsText(idx, r, run.commit, /*commit=*/true);
  if (!commit.empty()) absl::StrAppend(&origin, "; ", commit);
  const std::string resident = a.snapshots ? absl::StrFormat(" %10s", HumanRss(run.rss)) : "";
  return absl::StrFormat("  %012x-%012x %s %10s%s  %-28s %-12s %s\n", run.start, run.end, analysis::RegionProt(first.attrs),
                         HumanBytes(run.end - run.start), resident, EscapeName(analysis::RegionLabel(idx, first)),
                         run.kind ? analysis::KindName(*run.kind) : "-", origin);
}

}  // namespace

bool WriteMapsJson(const session::Session& trace, const analysis::MapsAnswer& answer, std::FILE* out) {
  const index::TraceIndex& idx = trace.index();
  OriginRenderer r(trace.frames());
  // DumpJson's layout of an array of regions, written directly: "[\n {" and
  // one space more per level inside; "[]" if empty.
  bool ok = true, first = true;
  std::string text;
  for (const analysis::ProcessMaps& pm : answer.processes) {
    for (const analysis::MapsRegion& region : pm.regions) {
      text = first ? "[\n {" : ",\n {";
      AppendRegionJson(idx, r, idx.process(pm.process).pid, region, &text);
      absl::StrAppend(&text, "\n }");
      first = false;
      ok &= std::fwrite(text.data(), 1, text.size(), out) == text.size();
    }
  }
  ok &= std::fputs(first ? "[]\n" : "\n]\n", out) >= 0;
  return ok;
}

std::string MapsText(const session::Session& trace, const analysis::MapsAnswer& answer, const analysis::SummaryOptions& frames) {
  const index::TraceIndex& idx = trace.index();
  OriginRenderer r(trace.frames(), frames);
  std::string out;
  for (const analysis::ProcessMaps& pm : answer.processes) {
    absl::StrAppend(&out, Heading(idx, answer, pm));
    for (const analysis::RegionRun& run : pm.runs) absl::StrAppend(&out, RunRow(idx, r, answer, pm, run));
  }
  if (out.empty()) out = "no process in the trace matches\n";
  return out;
}

}  // namespace pageblame::render

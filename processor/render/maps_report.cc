#include "processor/render/maps_report.h"

#include <sys/mman.h>

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "processor/analysis/kind_classifier.h"
#include "processor/analysis/kind_tally.h"
#include "processor/analysis/region_label.h"
#include "processor/analysis/resident_view.h"
#include "processor/analysis/syscall_format.h"
#include "processor/render/rss_text.h"

namespace pageblame::report {

namespace {

bool Wanted(const MapsOptions& o, RegionKind k) {
  return o.kinds.empty() || std::find(o.kinds.begin(), o.kinds.end(), k) != o.kinds.end();
}

}  // namespace

bool WriteMapsJson(const replay::LoadedTrace& trace, const MapsOptions& options,
                   std::FILE* out) {
  const index::TraceIndex& idx = trace.index();
  OriginRenderer r(idx, trace.symbolizer());
  const ResidentView rss(options.rss, idx);
  KindClassifier kinds(idx, r);
  // DumpJson's layout of an array of regions, written directly: "[\n {" and
  // one space more per level inside; "[]" if empty.
  bool ok = true, first = true;
  std::string text;
  for (uint32_t p : options.processes) {
    const residency::ResidencySnapshot* snapshot = rss.SnapshotFor(p, options.at);
    for (VersionId id : idx.RegionsAt(p, options.at)) {
      const index::Version& v = idx.version(id);
      const RegionKind kind = kinds.Of(v);
      if (!Wanted(options, kind)) continue;
      text.clear();
      absl::StrAppend(&text, first ? "[\n {" : ",\n {", "\n  \"pid\": ", idx.process(p).pid,
                      ",\n  \"start\": \"", Hex(v.start), "\",\n  \"end\": \"", Hex(v.end),
                      "\",\n  \"prot\": \"", ProtString(v.attrs.prot), "\",\n  \"path\": ");
      std::string_view path = idx.strings().Get(v.attrs.path);
      if (path.empty()) {
        absl::StrAppend(&text, "null");
      } else {
        AppendJsonString(&text, path);
      }
      absl::StrAppend(&text, ",\n  \"rss\": ", JsonRss(ResidentView::Bytes(snapshot, v.start, v.end)),
                      ",\n  \"kind\": \"", KindName(kind), "\",\n  \"origin\": ");
      r.AppendOriginJson(&text, v.origin, 2);
      absl::StrAppend(&text, ",\n  \"commit\": ");
      r.AppendOriginJson(&text, v.commit, 2);
      absl::StrAppend(&text, "\n }");
      first = false;
      ok &= std::fwrite(text.data(), 1, text.size(), out) == text.size();
    }
  }
  const char* end = first ? "[]\n" : "\n]\n";
  ok &= std::fputs(end, out) >= 0;
  return ok;
}

namespace {

// Versions the kernel would show as one VMA (docs: text `maps` merges them):
// adjacent, the same prot and the same kind of memory: one file at
// contiguous offsets, the heap, or anonymous memory made by one call stack
// (or all from before the trace).
bool SameRun(const index::TraceIndex& idx, const index::Version& a, const index::Version& b) {
  if (a.end != b.start || a.attrs.prot != b.attrs.prot || a.attrs.path != b.attrs.path) return false;
  if (a.origin.valid() != b.origin.valid()) return false;
  std::string_view path = idx.strings().Get(a.attrs.path);
  if (path == "[heap]") return true;
  if (!path.empty()) return a.attrs.pgoff + (a.end - a.start) == b.attrs.pgoff;
  if (!a.origin.valid()) return true;
  return idx.event(a.origin).stack == idx.event(b.origin).stack;
}

// What a row says of the calls behind its versions: the one that made the
// most bytes, and how many calls and stacks there were.
std::string RunOrigin(const index::TraceIndex& idx, OriginRenderer& r,
                      const std::vector<const index::Version*>& run, bool commit) {
  absl::flat_hash_map<EventId, uint64_t> bytes;
  absl::flat_hash_set<StackId> stacks;
  for (const index::Version* v : run) {
    const EventId ev = commit ? v->commit : v->origin;
    if (!ev.valid()) continue;
    bytes[ev] += v->end - v->start;
    stacks.insert(idx.event(ev).stack);
  }
  if (bytes.empty()) return commit ? "" : "existed before the trace";
  EventId top = bytes.begin()->first;
  for (const auto& [ev, n] : bytes) {
    if (n > bytes[top] || (n == bytes[top] && ev < top)) top = ev;
  }
  const index::CallEvent& ev = idx.event(top);
  std::string out = absl::StrCat(commit ? "committed by " : "", std::string(decode::SyscallName(ev.syscall)), " at ",
                                 FormatTime(ev.time), " by ", ev.tid, ": ", r.ShortStack(ev, 4));
  if (bytes.size() > 1) {
    absl::StrAppend(&out, " (+", bytes.size() - 1, bytes.size() == 2 ? " more call" : " more calls",
                    stacks.size() > 1 ? absl::StrCat(", ", stacks.size(), " stacks") : "", ")");
  }
  return out;
}

// Resident bytes of the versions: the sum of those the snapshot read;
// unknown if it read none of them.
std::optional<uint64_t> RunRss(const std::vector<const index::Version*>& run,
                               const residency::ResidencySnapshot* snapshot) {
  std::optional<uint64_t> sum;
  for (const index::Version* v : run) {
    AddRss(&sum, ResidentView::Bytes(snapshot, v->start, v->end));
  }
  return sum;
}

std::vector<const index::Version*> AllOf(const std::vector<std::vector<const index::Version*>>& runs) {
  std::vector<const index::Version*> all;
  for (const auto& run : runs) all.insert(all.end(), run.begin(), run.end());
  return all;
}

}  // namespace

std::string MapsText(const replay::LoadedTrace& trace, const MapsOptions& options) {
  const index::TraceIndex& idx = trace.index();
  OriginRenderer r(idx, trace.symbolizer(), options.frames);
  const ResidentView rss(options.rss, idx);
  KindClassifier kinds(idx, r);
  std::string out;
  for (uint32_t p : options.processes) {
    const index::Process& proc = idx.process(p);
    const residency::ResidencySnapshot* snapshot = rss.SnapshotFor(p, options.at);
    std::vector<VersionId> regions = idx.RegionsAt(p, options.at);
    if (!options.kinds.empty()) {
      regions.erase(std::remove_if(regions.begin(), regions.end(),
                                   [&](VersionId id) { return !Wanted(options, kinds.Of(idx.version(id))); }),
                    regions.end());
    }
    uint64_t created = 0, before = 0;
    for (VersionId id : regions) {
      const index::Version& v = idx.version(id);
      (v.origin.valid() ? created : before) += v.end - v.start;
    }
    std::vector<std::vector<const index::Version*>> runs;
    for (VersionId id : regions) {
      const index::Version& v = idx.version(id);
      if (options.split || runs.empty() || !SameRun(idx, *runs.back().back(), v)) runs.emplace_back();
      runs.back().push_back(&v);
    }
    absl::StrAppend(&out, "pid ", proc.pid, " (", std::string(idx.strings().Get(proc.comm)), ")",
                    proc.t_exit != index::kEndOfTrace ? absl::StrCat(", exited at ", FormatTime(proc.t_exit)) : "",
                    ": ", runs.size(), options.split ? " region versions" : " regions", " at ",
                    FormatTime(options.at), "; ", HumanBytes(created), " created during the trace, ",
                    HumanBytes(before), " from before it\n");
    if (rss.has_snapshots()) {
      absl::StrAppend(&out, "  resident: ", DescribeSnapshot(snapshot, options.at), "; ",
                      HumanRss(RunRss(AllOf(runs), snapshot)),
                      " resident in these regions\n",
                      absl::StrFormat("  %-25s %s %10s %10s  %-28s %-12s %s\n", "range", "prot", "size", "resident",
                                      "mapping", "kind", "origin"));
    }
    for (const auto& run : runs) {
      const index::Version& first = *run.front();
      const uint64_t end = run.back()->end;
      std::string origin = RunOrigin(idx, r, run, /*commit=*/false);
      const std::string commit = RunOrigin(idx, r, run, /*commit=*/true);
      if (!commit.empty()) absl::StrAppend(&origin, "; ", commit);
      KindTally tally;
      for (const index::Version* v : run) tally.Add(kinds.Of(*v), v->end - v->start);
      const std::optional<RegionKind> kind = tally.Dominant();
      const std::string resident =
          rss.has_snapshots() ? absl::StrFormat(" %10s", HumanRss(RunRss(run, snapshot))) : "";
      absl::StrAppend(&out, absl::StrFormat("  %012x-%012x %s %10s%s  %-28s %-12s %s\n", first.start, end,
                                            RegionProt(first.attrs), HumanBytes(end - first.start), resident,
                                            RegionLabel(idx, first), kind ? KindName(*kind) : "-", origin));
    }
  }
  if (out.empty()) out = "no process in the trace matches\n";
  return out;
}

}  // namespace pageblame::report

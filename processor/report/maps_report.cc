#include "processor/report/maps_report.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "processor/report/syscall_format.h"

namespace pageblame::report {

std::vector<uint32_t> SelectProcesses(const index::TraceIndex& idx, std::optional<uint32_t> pid) {
  std::vector<uint32_t> out;
  for (uint32_t p = 0; p < idx.num_processes(); ++p) {
    if (!pid || idx.process(p).pid == *pid) out.push_back(p);
  }
  std::stable_sort(out.begin(), out.end(), [&](uint32_t a, uint32_t b) {
    return idx.process(a).pid < idx.process(b).pid;
  });
  return out;
}

bool WriteMapsJson(const replay::LoadedTrace& trace, const MapsOptions& options,
                   std::FILE* out) {
  const index::TraceIndex& idx = trace.index();
  OriginRenderer r(idx, trace.symbolizer());
  // DumpJson's layout of an array of regions, written directly: "[\n {" and
  // one space more per level inside; "[]" if empty.
  bool ok = true, first = true;
  std::string text;
  for (uint32_t p : SelectProcesses(idx, options.pid)) {
    for (VersionId id : idx.RegionsAt(p, options.at)) {
      const index::Version& v = idx.version(id);
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
      absl::StrAppend(&text, ",\n  \"origin\": ");
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

std::string MapsText(const replay::LoadedTrace& trace, const MapsOptions& options) {
  const index::TraceIndex& idx = trace.index();
  OriginRenderer r(idx, trace.symbolizer());
  std::string out;
  for (uint32_t p : SelectProcesses(idx, options.pid)) {
    const index::Process& proc = idx.process(p);
    std::vector<VersionId> regions = idx.RegionsAt(p, options.at);
    uint64_t created = 0, before = 0;
    for (VersionId id : regions) {
      const index::Version& v = idx.version(id);
      (v.origin.valid() ? created : before) += v.end - v.start;
    }
    absl::StrAppend(&out, "pid ", proc.pid, " (", std::string(idx.strings().Get(proc.comm)), ")",
                    proc.t_exit != index::kLive ? absl::StrCat(", exited at ", FormatTime(proc.t_exit)) : "",
                    ": ", regions.size(), " regions at ", FormatTime(options.at), "; ",
                    HumanBytes(created), " created during the trace, ", HumanBytes(before),
                    " from before it\n");
    for (VersionId id : regions) {
      const index::Version& v = idx.version(id);
      std::string_view path = idx.strings().Get(v.attrs.path);
      std::string origin;
      if (v.origin.valid()) {
        const index::CallEvent& ev = idx.event(v.origin);
        origin = absl::StrCat(std::string(decode::SyscallName(ev.syscall)), " at ", FormatTime(ev.time), " by ",
                              ev.tid, ": ", r.ShortStack(ev, 4));
      } else {
        origin = "existed before the trace";
      }
      if (v.commit.valid()) {
        const index::CallEvent& ev = idx.event(v.commit);
        absl::StrAppend(&origin, "; committed by ", std::string(decode::SyscallName(ev.syscall)),
                        " at ", FormatTime(ev.time), " by ", ev.tid, ": ", r.ShortStack(ev, 4));
      }
      absl::StrAppend(&out, absl::StrFormat("  %012x-%012x %s %10s  %-28s %s\n", v.start, v.end,
                                            ProtString(v.attrs.prot), HumanBytes(v.end - v.start),
                                            path.empty() ? "[anon]" : std::string(path), origin));
    }
  }
  if (out.empty()) out = "no process in the trace matches\n";
  return out;
}

}  // namespace pageblame::report

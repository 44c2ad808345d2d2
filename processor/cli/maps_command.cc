#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "processor/cli/commands.h"
#include "processor/cli/trace_options.h"
#include "processor/report/maps_report.h"

namespace pageblame::cli {

static constexpr char kMapsHelp[] =
    "usage: pageblame maps -i TRACE [--pid PID] [--at T] [--json] [-v]\n"
    "                      [--symfs DIR] [--buildid-dir DIR] [--perf-map-dir DIR]\n"
    "The reconstructed address space of every traced process (or PID) at time T\n"
    "(perf script seconds, or 'end', the default), each region with the call\n"
    "stack that created it, or 'existed before the trace'.\n";

int RunMaps(const std::vector<std::string>& argv) {
  for (const std::string& a : argv) {
    if (a == "-h" || a == "--help") return std::fputs(kMapsHelp, stdout), 0;
  }
  auto args = Args::Parse(argv, kTraceAliases, kTraceValueFlags, kTraceBoolFlags);
  if (!args.ok()) return std::fprintf(stderr, "pageblame maps: %s\n%s", std::string(args.status().message()).c_str(), kMapsHelp), 2;
  if (!args->positional().empty()) {
    std::fprintf(stderr, "pageblame maps: unexpected argument '%s'\n%s", args->positional()[0].c_str(), kMapsHelp);
    return 2;
  }
  auto sel = ParseSelection(*args);
  if (!sel.ok()) return ReportError(sel.status());
  auto trace = LoadFromArgs(*args);
  if (!trace.ok()) return ReportError(trace.status());
  report::MapsOptions o;
  o.pid = sel->pid;
  o.at = sel->at;
  if (args->Has("--json")) {
    if (!report::WriteMapsJson(**trace, o, stdout)) {
      return ReportError(absl::UnavailableError(
          absl::StrCat("writing the output failed: ", std::strerror(errno))));
    }
  } else {
    std::fputs(report::MapsText(**trace, o).c_str(), stdout);
  }
  return 0;
}

}  // namespace pageblame::cli

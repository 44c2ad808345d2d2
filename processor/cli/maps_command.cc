#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "processor/cli/command_spec.h"
#include "processor/cli/commands.h"
#include "processor/cli/trace_options.h"
#include "processor/report/maps_report.h"

namespace pageblame::cli {

const CommandSpec& MapsSpec() {
  static const CommandSpec kSpec = [] {
    CommandSpec s;
    s.name = "maps";
    s.help = absl::StrCat(
        "usage: pageblame maps -i TRACE [--pid PID] [--at T] [--split] [--json] [-v]\n"
        "The reconstructed address space of every traced process (or PID) at time T,\n"
        "each region with the call stack that created it (or 'existed before the\n"
        "trace') and, if it was committed later, the one that committed it.\n"
        "  --split               text: every region version (one per creating call)\n"
        "                        instead of one row per run the kernel would merge\n",
        kTraceOptionsHelp);
    s.value_flags = kTraceValueFlags;
    s.bool_flags = kTraceBoolFlags;
    s.bool_flags.insert("--split");
    s.aliases = kTraceAliases;
    return s;
  }();
  return kSpec;
}

int RunMaps(const std::vector<std::string>& argv) {
  int rc = 0;
  std::optional<Args> args = ParseCommand(MapsSpec(), argv, &rc);
  if (!args) return rc;
  auto sel = ParseSelection(*args);
  if (!sel.ok()) return ReportError(sel.status());
  auto trace = LoadFromArgs(*args);
  if (!trace.ok()) return ReportError(trace.status());
  auto resolved = Resolve(*sel, **trace, /*by_commit=*/false);
  if (!resolved.ok()) return ReportError(resolved.status());
  report::MapsOptions o;
  o.pid = resolved->pid;
  o.at = resolved->at;
  o.split = args->Has("--split");
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

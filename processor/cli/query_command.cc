#include <cstdio>

#include "absl/strings/str_cat.h"
#include "processor/cli/commands.h"
#include "processor/cli/trace_options.h"
#include "processor/regions/address.h"
#include "processor/report/query_report.h"

namespace pageblame::cli {

static constexpr char kQueryHelp[] =
    "usage: pageblame query -i TRACE [--pid PID] [--at T] [--history] [--json] ADDR...\n"
    "Which call stack created the page at each ADDR (0x7f.., bare hex, or WinDbg\n"
    "7f12`34567000), in every traced process that had it mapped at time T.\n";

int RunQuery(const std::vector<std::string>& argv) {
  for (const std::string& a : argv) {
    if (a == "-h" || a == "--help") return std::fputs(kQueryHelp, stdout), 0;
  }
  std::set<std::string> bools = kTraceBoolFlags;
  bools.insert("--history");
  auto args = Args::Parse(argv, kTraceAliases, kTraceValueFlags, bools);
  if (!args.ok()) return std::fprintf(stderr, "pageblame query: %s\n%s", std::string(args.status().message()).c_str(), kQueryHelp), 2;
  if (args->positional().empty()) {
    std::fprintf(stderr, "pageblame query: no address given\n%s", kQueryHelp);
    return 2;
  }
  report::QueryOptions o;
  for (const std::string& text : args->positional()) {
    auto addr = regions::ParseAddress(text);
    if (!addr.ok()) return ReportError(addr.status());
    o.addresses.push_back(*addr);
  }
  auto sel = ParseSelection(*args);
  if (!sel.ok()) return ReportError(sel.status());
  auto trace = LoadFromArgs(*args);
  if (!trace.ok()) return ReportError(trace.status());
  o.pid = sel->pid;
  o.at = sel->at;
  o.history = args->Has("--history");
  if (args->Has("--json")) {
    std::printf("%s\n", report::DumpJson(report::QueryJson(**trace, o)).c_str());
  } else {
    std::fputs(report::QueryText(**trace, o).c_str(), stdout);
  }
  return 0;
}

}  // namespace pageblame::cli

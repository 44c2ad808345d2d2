// `pageblame index -i TRACE`: replays a trace now and writes its index
// (TRACE.index, replay/recording_file.h) beside it, so that the next
// command loads it; says whether a current one was already there. Every
// other command writes the index on first use too: this one is for doing
// it ahead (after `record`, on a machine where the questions come later).
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "processor/base/text_escape.h"
#include "processor/cli/command_spec.h"
#include "processor/cli/commands.h"
#include "processor/cli/trace_options.h"
#include "processor/cli/usage.h"
#include "processor/session/session.h"

namespace pageblame::cli {

const CommandSpec& IndexSpec() {
  static const CommandSpec kSpec = [] {
    CommandSpec s;
    s.name = "index";
    s.help = absl::StrCat(
        "usage: pageblame index -i TRACE [--symfs DIR] [--buildid-dir DIR] [-f]\n"
        "Replays TRACE once and writes TRACE.index beside it: every later command on\n"
        "the trace loads that instead of replaying (while it matches the trace, its\n"
        "binaries and this pageblame; else it is rebuilt). Commands write it on first\n"
        "use too; this does it ahead. Says whether a current index was there.\n",
        kTraceInputHelp,
        "  --symfs DIR           look for every binary under DIR (perf's --symfs)\n"
        "  --buildid-dir DIR     the build-id cache (perf's; default ~/.debug)\n"
        "  -f, --force           use side files others could have written (perf's -f)\n"
        "  -v, --verbose         what the load saw\n");
    s.value_flags = {"--input", "--symfs", "--buildid-dir"};
    s.bool_flags = {"--force", "--verbose"};
    s.aliases = {{"-i", "--input"}, {"-f", "--force"}, {"-v", "--verbose"}};
    return s;
  }();
  return kSpec;
}

int RunIndex(const std::vector<std::string>& argv) {
  int rc = 0;
  std::optional<Args> args = ParseCommand(IndexSpec(), argv, &rc);
  if (!args) return rc;
  absl::StatusOr<session::SessionOptions> o = SessionOptionsFromArgs(*args, /*rss_required=*/false);
  if (!o.ok()) return ReportError(o.status());
  if (o->path == "-") return CommandUsage(IndexSpec(), "a pipe has no index: give a trace file");
  o->residency.off = true;  // the index holds the replay only
  o->preload_symbols = false;
  absl::StatusOr<std::unique_ptr<session::Session>> s = session::Session::Open(*o);
  if (!s.ok()) return ReportError(s.status());
  if ((*s)->index_use() == session::Session::IndexUse::kNone) {
    return ReportError(absl::UnavailableError(absl::StrCat(o->path, ": no index kept: ", (*s)->load_note())));
  }
  std::fprintf(stderr, "pageblame index: %s: %s\n", EscapeName(o->path).c_str(), EscapeName((*s)->load_note()).c_str());
  return 0;
}

}  // namespace pageblame::cli

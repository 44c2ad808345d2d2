#include <sys/stat.h>

#include <cstdio>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "processor/analysis/kind_classifier.h"
#include "processor/base/input_file.h"
#include "processor/base/text_escape.h"
#include "processor/cli/command_spec.h"
#include "processor/cli/commands.h"
#include "processor/cli/trace_options.h"
#include "processor/cli/usage.h"
#include "processor/regions/address.h"
#include "processor/render/query_report.h"

namespace pageblame::cli {

const CommandSpec& QuerySpec() {
  static const CommandSpec kSpec = [] {
    CommandSpec s;
    s.name = "query";
    s.help = absl::StrCat(
        "usage: pageblame query -i TRACE [--pid PID] [--at T] [--history] [--json]\n"
        "                       (ADDR... | --addresses FILE)\n"
        "Which call stack created the page at each ADDR (0x7f.., bare hex, or WinDbg\n"
        "7f12`34567000), and which committed it, in every traced process that had it\n"
        "mapped at time T; for a page gone by then, its last tenant and how it went.\n"
        "  --history             what happened to the page: created, split, moved,\n"
        "                        committed, protected, released, unmapped...\n"
        "  --addresses FILE      one address per line ('#' comments; - for stdin),\n"
        "                        for lists too long for a command line\n",
        kTraceOptionsHelp);
    s.value_flags = kTraceValueFlags;
    s.value_flags.insert("--addresses");
    s.bool_flags = kTraceBoolFlags;
    s.bool_flags.insert("--history");
    s.aliases = kTraceAliases;
    s.many_positional = true;
    return s;
  }();
  return kSpec;
}

namespace {

bool IsFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// An address argument; a file where an address should be is most likely a
// trace given without -i.
absl::StatusOr<uint64_t> AddressArg(const std::string& text) {
  absl::StatusOr<uint64_t> a = regions::ParseAddress(text);
  if (a.ok()) return a;
  if (IsFile(text)) {
    return UsageError(absl::StrCat("'", text, "' is a file, not an address: did you mean -i ",
                                   text, "?"));
  }
  return UsageError(a.status().message());
}

// --addresses FILE: a bad line is bad input (exit 1), named by line.
absl::Status ReadAddressFile(const std::string& path, std::vector<uint64_t>* out) {
  absl::StatusOr<std::string> all = InputFile::ReadWhole(path == "-" ? "/dev/stdin" : path, "list of addresses",
                                                         InputFile::Accept::kRegularOrStream);
  if (!all.ok()) return all.status();
  int n = 0;
  for (absl::string_view line : absl::StrSplit(*all, '\n')) {
    ++n;
    absl::string_view text = absl::StripAsciiWhitespace(line);
    if (text.empty() || text[0] == '#') continue;
    absl::StatusOr<uint64_t> a = regions::ParseAddress(text);
    if (!a.ok()) return absl::DataLossError(absl::StrCat(path, ":", n, ": ", a.status().message()));
    out->push_back(*a);
  }
  return absl::OkStatus();
}

}  // namespace

int RunQuery(const std::vector<std::string>& argv) {
  int rc = 0;
  std::optional<Args> args = ParseCommand(QuerySpec(), argv, &rc);
  if (!args) return rc;
  analysis::QueryOptions o;
  for (const std::string& text : args->positional()) {
    auto addr = AddressArg(text);
    if (!addr.ok()) return CommandUsage(QuerySpec(), std::string(addr.status().message()));
    o.addresses.push_back(*addr);
  }
  if (auto list = args->Value("--addresses")) {
    if (absl::Status s = ReadAddressFile(*list, &o.addresses); !s.ok()) return ReportError(s);
  }
  if (o.addresses.empty()) return CommandUsage(QuerySpec(), "no address given");
  auto sel = ParseSelection(*args);
  if (!sel.ok()) return ReportError(sel.status());
  auto trace = LoadFromArgs(*args);
  if (!trace.ok()) return ReportError(trace.status());
  auto resolved = Resolve(*sel, **trace, /*by_commit=*/false);
  if (!resolved.ok()) return ReportError(resolved.status());
  o.Select(**trace, *resolved);
  o.history = args->Has("--history");
  // The region's kind: inside malloc's arenas the answer splits in use / free.
  analysis::KindClassifier classifier((*trace)->frames());
  o.kind_of = classifier.Function();
  const std::vector<analysis::QueryAnswer> answers = analysis::Query((*trace)->index(), o);
  if (args->Has("--json")) {
    // A failed write sets stdout's error flag, which main's Exit reports.
    render::WriteQueryJson(**trace, o, answers, stdout);
  } else {
    // The last line of defence, as OutputFile::WriteText.
    std::fputs(EscapeText(render::QueryText(**trace, o, answers)).c_str(), stdout);
  }
  return 0;
}

}  // namespace pageblame::cli

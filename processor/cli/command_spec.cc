#include "processor/cli/command_spec.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "processor/base/text_escape.h"
#include "processor/cli/usage.h"

namespace pageblame::cli {

// A message is one line by contract, and can quote what an input holds (a
// path a trace recorded, a line of a table): escaped whole, newlines too.
int ReportError(const absl::Status& s) {
  std::fprintf(stderr, "pageblame: %s\n", EscapeName(std::string(s.message())).c_str());
  return ExitCodeFor(s);
}

int CommandUsage(const CommandSpec& spec, const std::string& message) {
  std::fprintf(stderr, "pageblame %s: %s (see 'pageblame %s --help')\n", spec.name.c_str(),
               EscapeName(message).c_str(), spec.name.c_str());
  return kExitUsage;
}

std::optional<Args> ParseCommand(const CommandSpec& spec, const std::vector<std::string>& argv,
                                 int* rc) {
  for (const std::string& a : argv) {
    if (a == "--") break;
    if (a == "-h" || a == "--help") {
      std::fputs(spec.help.c_str(), stdout);
      *rc = kExitOk;
      return std::nullopt;
    }
  }
  absl::StatusOr<Args> args = Args::Parse(argv, spec.aliases, spec.value_flags, spec.bool_flags);
  if (!args.ok()) {
    *rc = CommandUsage(spec, std::string(args.status().message()));
    return std::nullopt;
  }
  const size_t n = args->positional().size();
  if (n < spec.min_positional) {
    *rc = CommandUsage(spec, "missing arguments");
    return std::nullopt;
  }
  if (n > spec.min_positional && !spec.many_positional) {
    *rc = CommandUsage(spec, absl::StrCat("unexpected argument '", args->positional()[spec.min_positional], "'"));
    return std::nullopt;
  }
  return std::move(args).value();
}

}  // namespace pageblame::cli

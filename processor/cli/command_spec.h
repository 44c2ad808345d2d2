// What a pageblame subcommand accepts, in one place: its options (the parser
// takes these and nothing else) and its --help text (a test checks that the
// text names every option). ParseCommand does what every command does first:
// --help, parsing, and one clear line for a usage mistake.
//
//   static const CommandSpec kSpec = {"maps", kHelp, TraceValueFlags(), TraceBoolFlags({}), ...};
//   int rc;
//   std::optional<Args> args = ParseCommand(kSpec, argv, &rc);
//   if (!args) return rc;   // 0 after --help, 2 after a usage mistake
#ifndef PAGEBLAME_CLI_COMMAND_SPEC_H_
#define PAGEBLAME_CLI_COMMAND_SPEC_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "processor/cli/args.h"

namespace pageblame::cli {

struct CommandSpec {
  std::string name;  // "maps"
  std::string help;  // the whole --help text, starting "usage: pageblame NAME ..."
  std::set<std::string> value_flags;
  std::set<std::string> bool_flags;
  std::map<std::string, std::string> aliases;  // "-i" -> "--input"
  // Positional arguments: how many at least (more are allowed if `many`).
  size_t min_positional = 0;
  bool many_positional = false;
};

// --help prints spec.help (then *rc = 0); a parse error or a wrong number of
// positionals prints one line, "pageblame NAME: what is wrong (see ...)"
// (then *rc = 2). Returns the parsed arguments otherwise.
std::optional<Args> ParseCommand(const CommandSpec& spec, const std::vector<std::string>& argv,
                                 int* rc);
// Prints "pageblame NAME: message (see 'pageblame NAME --help')"; returns 2.
int CommandUsage(const CommandSpec& spec, const std::string& message);
// Prints "pageblame: message" (naming what went wrong) and returns the exit
// code of `s` (usage.h).
int ReportError(const absl::Status& s);

}  // namespace pageblame::cli

#endif  // PAGEBLAME_CLI_COMMAND_SPEC_H_

// pageblame's subcommands. Each takes the arguments after its name and
// returns the process exit code (0 ok, 1 bad input, 2 usage).
#ifndef PAGEBLAME_CLI_COMMANDS_H_
#define PAGEBLAME_CLI_COMMANDS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace pageblame::cli {

int RunMaps(const std::vector<std::string>& argv);
int RunQuery(const std::vector<std::string>& argv);

// Prints "pageblame: <message>" and returns the exit code for `s`.
int ReportError(const absl::Status& s);

}  // namespace pageblame::cli

#endif  // PAGEBLAME_CLI_COMMANDS_H_

// pageblame's subcommands. Each takes the arguments after its name and
// returns the process exit code (0 ok, 1 bad input, 2 usage).
#ifndef PAGEBLAME_CLI_COMMANDS_H_
#define PAGEBLAME_CLI_COMMANDS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace pageblame::regions {
struct RegionTable;
}  // namespace pageblame::regions

namespace pageblame::cli {

int RunMaps(const std::vector<std::string>& argv);
int RunQuery(const std::vector<std::string>& argv);
int RunDiff(const std::vector<std::string>& argv);
int RunAttribute(const std::vector<std::string>& argv);

// Region tables (diff_command.cc, shared with attribute): prints the parser's
// skipped-row count and first reason to stderr, if any; and a table error as
// one line with exit code 1 (bad input, not bad usage).
void PrintSkipped(const regions::RegionTable& t, const std::string& name);
int ReportTableError(const absl::Status& s);

// Prints "pageblame: <message>" and returns the exit code for `s`.
int ReportError(const absl::Status& s);

}  // namespace pageblame::cli

#endif  // PAGEBLAME_CLI_COMMANDS_H_

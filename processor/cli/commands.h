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

struct CommandSpec;

int RunMaps(const std::vector<std::string>& argv);
int RunQuery(const std::vector<std::string>& argv);
int RunDiff(const std::vector<std::string>& argv);
int RunAttribute(const std::vector<std::string>& argv);
int RunRecord(const std::vector<std::string>& argv);

// What each accepts (command_spec.h), beside its Run function.
const CommandSpec& MapsSpec();
const CommandSpec& QuerySpec();
const CommandSpec& DiffSpec();
const CommandSpec& AttributeSpec();
const CommandSpec& RecordSpec();

// Region tables (diff_command.cc, shared with attribute): prints the parser's
// skipped-row count and first reason to stderr, if any.
void PrintSkipped(const regions::RegionTable& t, const std::string& name);

}  // namespace pageblame::cli

#endif  // PAGEBLAME_CLI_COMMANDS_H_

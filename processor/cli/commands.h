// pageblame's subcommands. Each takes the arguments after its name and
// returns the process exit code (0 ok, 1 bad input, 2 usage).
#ifndef PAGEBLAME_CLI_COMMANDS_H_
#define PAGEBLAME_CLI_COMMANDS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "processor/session/unaccounted.h"

namespace pageblame::regions {
struct RegionTable;
struct Region;
}  // namespace pageblame::regions

namespace pageblame::cli {

struct CommandSpec;
class Args;

int RunMaps(const std::vector<std::string>& argv);
int RunQuery(const std::vector<std::string>& argv);
int RunDiff(const std::vector<std::string>& argv);
int RunAttribute(const std::vector<std::string>& argv);
int RunRecord(const std::vector<std::string>& argv);
int RunGrowth(const std::vector<std::string>& argv);
// `pageblame index`: the trace replayed now and TRACE.index written beside it.
int RunIndex(const std::vector<std::string>& argv);
int RunReport(const std::vector<std::string>& argv);
int RunDotnetRegions(const std::vector<std::string>& argv);
int RunHeap(const std::vector<std::string>& argv);

// What each accepts (command_spec.h), beside its Run function.
const CommandSpec& MapsSpec();
const CommandSpec& QuerySpec();
const CommandSpec& DiffSpec();
const CommandSpec& AttributeSpec();
const CommandSpec& RecordSpec();
const CommandSpec& GrowthSpec();
const CommandSpec& ReportSpec();
const CommandSpec& DotnetRegionsSpec();
const CommandSpec& HeapSpec();
const CommandSpec& IndexSpec();

// Region tables (diff_command.cc, shared with attribute): prints the parser's
// skipped-row count and first reason to stderr, if any, and why a pmap or
// smaps table has no resident bytes (RegionTable::rss_note), if it has none.
void PrintSkipped(const regions::RegionTable& t, const std::string& name);

// The regions of --regions FILE (free rows left out, overlapping rows
// merged, with a note on stderr) or the unaccounted pieces of --address A
// --maddress M (attribute_command.cc, shared with report); with
// --unaccounted none yet: they come from the trace once it is loaded
// (RegionsFromTrace). nullopt with the exit code in *rc when they cannot be
// read or the options are misused (usage messages name `spec`'s command).
std::optional<std::vector<regions::Region>> ReadRegionsFromArgs(const CommandSpec& spec, const Args& args,
                                                                int* rc);
// --unaccounted: session::UnaccountedOf for the trace of -i, minus
// --maddress if given; `selection` then names its process and moment.
absl::StatusOr<session::Unaccounted> RegionsFromTrace(const Args& args, const session::Session& trace,
                                                      session::Selection* selection);

}  // namespace pageblame::cli

#endif  // PAGEBLAME_CLI_COMMANDS_H_

// Options every trace-reading subcommand shares (-i, --pid, --at, --symfs,
// --perf-map-dir, -v), turned into a loaded trace.
#ifndef PAGEBLAME_CLI_TRACE_OPTIONS_H_
#define PAGEBLAME_CLI_TRACE_OPTIONS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "processor/cli/args.h"
#include "processor/replay/trace_loader.h"

namespace pageblame::cli {

inline const std::map<std::string, std::string> kTraceAliases = {{"-i", "--input"},
                                                                  {"-v", "--verbose"}};
inline const std::set<std::string> kTraceValueFlags = {"--input", "--pid", "--at", "--symfs",
                                                       "--perf-map-dir", "--buildid-dir"};
inline const std::set<std::string> kTraceBoolFlags = {"--verbose", "--json"};

struct TraceSelection {
  std::optional<uint32_t> pid;
  uint64_t at = UINT64_MAX;  // index::kLive
};

absl::StatusOr<TraceSelection> ParseSelection(const Args& args);
// Loads the trace named by -i (default ./perf.data, as perf does); with -v,
// prints the data-quality stats to stderr. The trace is kept until the process
// exits and is never freed: main() leaves with _Exit after flushing, because
// taking apart an index of millions of entries only delays the exit (~5 % of
// a big load).
absl::StatusOr<const replay::LoadedTrace*> LoadFromArgs(const Args& args);
// With -v: what symbolization did (frames looked up and resolved, ELF files
// read, DSOs not found), once the answer is out: frames are symbolized as
// they are printed, so only then are the counts whole. Nothing without -v
// or before a trace was loaded. main() calls it on the way out.
void PrintSymbolStats();

}  // namespace pageblame::cli

#endif  // PAGEBLAME_CLI_TRACE_OPTIONS_H_

// Which perf.data the running `perf script` reads, found from its own command
// line, so the plugin can index the same file with the pageblame library.
//
//   ASSIGN_OR_RETURN(std::vector<std::string> argv, ReadOwnCommandLine());
//   ASSIGN_OR_RETURN(std::string path, TraceInputFromArgv(argv, StdinIsFifo()));
//   // "perf script -i t.data ..." -> "t.data";  "perf script" -> "perf.data"
//
// perf's rules (tools/perf/builtin-script.c, cmd_script): `-i FILE`, `-iFILE`,
// `--input FILE`, `--input=FILE` (parse-options also takes an unambiguous
// prefix such as --inp); the last one wins; with none, stdin is read when it
// is a FIFO ("-"), else ./perf.data.
#ifndef PAGEBLAME_PLUGIN_PERF_COMMAND_LINE_H_
#define PAGEBLAME_PLUGIN_PERF_COMMAND_LINE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace pageblame::plugin {

// The arguments of this process (/proc/self/cmdline), argv[0] included.
absl::StatusOr<std::vector<std::string>> ReadOwnCommandLine();

bool StdinIsFifo();

// The input path perf script reads, "-" for stdin. Only the arguments after
// the "script" subcommand are considered.
std::string TraceInputFromArgv(const std::vector<std::string>& argv, bool stdin_is_fifo);

// Where perf finds the binaries of the trace, so the plugin's symbols and
// its view of the binaries' own mappings (data and bss segments, which exist
// before the trace) come from the same files as perf's:
//   `perf --buildid-dir DIR script ...` (a global option, before "script";
//   else $PERF_BUILDID_DIR, as perf does), and `perf script --symfs DIR`.
struct PerfSymbolPaths {
  std::string buildid_dir;  // "" means perf's default, ~/.debug
  std::string symfs;
};
PerfSymbolPaths SymbolPathsFromArgv(const std::vector<std::string>& argv, const char* env_buildid_dir);

// Whether perf script was told -f/--force ("don't complain, do it";
// builtin-script.c sets symbol_conf.force, which also makes perf read a
// /tmp/perf-PID.map another user owns): the plugin's symbolizer then uses
// such maps too (base/side_file_trust.h). Exactly "-f" or "--force" after
// "script" (the last of those and "--no-force" wins), not after "--".
bool ForceFromArgv(const std::vector<std::string>& argv);

// OK if `path` can be read again from the start by the library: not "-" and
// not a FIFO. Otherwise FailedPrecondition saying to pass --dlarg trace=FILE.
absl::Status CheckRereadable(const std::string& path);

}  // namespace pageblame::plugin

#endif  // PAGEBLAME_PLUGIN_PERF_COMMAND_LINE_H_

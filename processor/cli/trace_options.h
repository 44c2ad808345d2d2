// Options every trace-reading subcommand shares (-i, --pid, --at, --symfs,
// --buildid-dir, --perf-map-dir, -f, -v, --json), turned into a loaded trace
// and a resolved selection.
//
//   ASSIGN_OR_RETURN(SelectionRequest sel, ParseSelection(args));        // before loading
//   ASSIGN_OR_RETURN(const LoadedTrace* t, LoadFromArgs(args));
//   ASSIGN_OR_RETURN(Selection s, Resolve(sel, *t, /*by_commit=*/false));  // pid known, time in the trace
#ifndef PAGEBLAME_CLI_TRACE_OPTIONS_H_
#define PAGEBLAME_CLI_TRACE_OPTIONS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "processor/analysis/app_frames.h"
#include "processor/analysis/method_groups.h"
#include "processor/analysis/rank_by.h"
#include "processor/analysis/region_kind.h"
#include "processor/cli/args.h"
#include "processor/session/session.h"
#include "processor/residency/residency_index.h"
#include "processor/session/selection.h"

namespace pageblame::cli {

inline const std::map<std::string, std::string> kTraceAliases = {
    {"-i", "--input"}, {"-v", "--verbose"}, {"-f", "--force"}};
inline const std::set<std::string> kTraceValueFlags = {"--input", "--pid", "--at", "--symfs",
                                                       "--perf-map-dir", "--buildid-dir", "--rss"};
inline const std::set<std::string> kTraceBoolFlags = {"--verbose", "--json", "--no-inline", "--force", "--no-rss",
                                                      "--no-index"};
// The help lines of those options, for each command's --help: the input,
// the selection (--pid, --at), and the rest; kTraceOptionsHelp is all three.
inline const std::string kTraceInputHelp = absl::StrCat(
    "  -i, --input TRACE     the perf.data file (default ./", session::kDefaultTracePath, "; - for a pipe)\n");
inline constexpr char kTraceSelectionHelp[] =
    "  --pid PID             one process (a pid not in the trace is an error)\n"
    "  --at T                the moment: perf script seconds (216.083882), +S after\n"
    "                        the trace's start, -S before its end, end (default), or\n"
    "                        peak (when the process had the most bytes mapped)\n";
inline constexpr char kTraceSymbolsHelp[] =
    "  --json                JSON output (docs/cli.md)\n"
    "  -v, --verbose         what the load saw (lost events, sources, counters) and,\n"
    "                        after the answer, what symbolization found\n"
    "  --symfs DIR           look for every binary under DIR (perf's --symfs)\n"
    "  --buildid-dir DIR     the build-id cache (perf's; default ~/.debug)\n"
    "  --perf-map-dir DIR    where perf-PID.map files are, after the trace's\n"
    "                        directory and /tmp\n"
    "  -f, --force           use a perf-PID.map, jitdump, binary, TRACE.rss or saved\n"
    "                        runtime table from /tmp or another directory others can\n"
    "                        write even when another user owns it or may write it\n"
    "                        (perf's -f); without it: a warning, and it is not used\n"
    "  --no-index            replay the trace, neither using nor writing TRACE.index\n"
    "                        (the replay kept beside a trace for the next command)\n"
    "  --no-inline           no inlined frames in unwound stacks (perf's --no-inline):\n"
    "                        skips reading DWARF debug info (~12 MiB for libc's)\n"
    "  --rss FILE            residency snapshots (default TRACE.rss beside the trace,\n"
    "                        written by pageblame record): resident bytes beside\n"
    "                        mapped ones (docs/residency.md); --no-rss: without them\n";
inline const std::string kTraceOptionsHelp = kTraceInputHelp + kTraceSelectionHelp + kTraceSymbolsHelp;

// --pid and --at, before the trace is read (session/selection.h says what
// they name in it).
using session::SelectionRequest;
using session::Selection;

absl::StatusOr<SelectionRequest> ParseSelection(const Args& args);

// --frames app|all and --hide REGEX, for the commands that say stacks in one
// line (maps, attribute, growth, report): analysis/app_frames.h.
inline constexpr char kFramesHelp[] =
    "  --frames app|all      one-line stacks: the application's frames with the\n"
    "                        allocator entry it called (app, default), or the\n"
    "                        innermost frames whatever they are (all)\n"
    "  --hide REGEX          one-line stacks leave out the frames whose function or\n"
    "                        file matches REGEX (ECMAScript syntax, anywhere in it)\n";
inline const std::set<std::string> kFramesFlags = {"--frames", "--hide"};
// A usage error for another --frames value or a bad --hide pattern.
absl::StatusOr<analysis::SummaryOptions> ParseFrames(const Args& args);
// --group method|stack (attribute, growth): the first screen's rows
// (analysis/method_groups.h).
inline constexpr char kGroupHelp[] =
    "  --group method|stack  text: a row per application method, its name whole\n"
    "                        and its context as the terminal's width allows (method,\n"
    "                        default; --detail adds each method's stacks), or a row\n"
    "                        per stack\n";
// A usage error for another value.
absl::StatusOr<analysis::GroupBy> ParseGroup(const Args& args);
// --kind K[,K] (maps, attribute, growth): analysis/region_kind.h.
inline constexpr char kKindHelp[] =
    "  --kind K[,K]          only regions of these kinds: thread-stack, malloc, heap,\n"
    "                        file, image, jit-code, gc-heap, anon, reservation\n";
// Empty without --kind; a usage error for an unknown kind.
absl::StatusOr<std::vector<analysis::RegionKind>> ParseKindFilter(const Args& args);
// session::Resolve, with its notes said on stderr. Usage errors for a pid
// not in the trace (naming its pids) or a time outside it (naming its span).
// `by_commit`: --at peak means the most bytes committed rather than mapped.
absl::StatusOr<Selection> Resolve(const SelectionRequest& sel, const session::Session& trace,
                                  bool by_commit);
// The trace named by -i (session::kDefaultTracePath, as perf does).
std::string InputPath(const Args& args);
// The session every trace command opens: -i, --symfs, --buildid-dir,
// --perf-map-dir, --no-inline, -f, --rss/--no-rss (`rss_required`: the
// answer is resident bytes; --no-rss then is a usage error), -v.
absl::StatusOr<session::SessionOptions> SessionOptionsFromArgs(const Args& args, bool rss_required);
// Opens that session; with -v, prints the data-quality stats to stderr; its
// warnings are said on stderr. The session is kept until the process exits
// and is never freed: main() leaves with _Exit after flushing, because
// taking apart an index of millions of entries only delays the exit (~5 %
// of a big load).
// `heap`: whether TRACE.heap is loaded (session/heap_load.h).
absl::StatusOr<const session::Session*> LoadFromArgs(const Args& args, bool rss_required = false,
                                                     session::HeapRequest heap = {});
// --sort rss|committed|mapped for attribute and growth (analysis/rank_by.h).
inline constexpr char kSortHelp[] =
    "  --sort rss|committed|mapped\n"
    "                        rank stacks by resident bytes (default when the trace\n"
    "                        has residency snapshots), committed bytes (default\n"
    "                        without), or mapped bytes\n";
// nullopt when not given; a usage error for another value.
absl::StatusOr<std::optional<analysis::RankBy>> ParseSort(const Args& args);
// What to rank by: the one asked, else resident bytes when there are
// snapshots, else committed bytes.
analysis::RankBy Ranking(std::optional<analysis::RankBy> asked, const residency::ResidencyIndex* rss);

// With -v: what symbolization did (frames looked up and resolved, ELF files
// read, DSOs not found), once the answer is out: frames are symbolized as
// they are printed, so only then are the counts whole. Nothing without -v
// or before a trace was loaded. main() calls it on the way out.
void PrintSymbolStats();

}  // namespace pageblame::cli

#endif  // PAGEBLAME_CLI_TRACE_OPTIONS_H_

// What a user selects in a loaded trace, decided once for every front end
// (the CLI's commands and the dlfilter plugin): which process entries a pid
// names, and which moment a time names.
//
//   ASSIGN_OR_RETURN(Selection s, Resolve({pid, at}, session, PeakOf::kMapped));
//   for (uint32_t p : s.processes) ... s.at ...
//   for (const std::string& n : s.notes) say(n);
//
// A pid names every process entry with that pid (a reused pid, an exec'd
// program: several), ordered by start; no pid names every entry, by pid
// then start — in a system-wide recording (perf -a), every entry that made
// a memory call (with a note saying how many others there are). A pid not in the trace, or a time outside it, is a usage
// error (base/usage_error.h) naming the trace's pids or span.
#ifndef PAGEBLAME_SESSION_SELECTION_H_
#define PAGEBLAME_SESSION_SELECTION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "processor/index/trace_index.h"
#include "processor/session/session.h"
#include "processor/session/time_spec.h"

namespace pageblame::session {

// What was asked, before the trace is read.
struct SelectionRequest {
  std::optional<uint32_t> pid;
  TimeSpec at;
};

// What it names in the trace.
struct Selection {
  std::optional<uint32_t> pid;
  uint64_t at = index::kEndOfTrace;       // index::kEndOfTrace: the end of the trace
  std::vector<uint32_t> processes;  // process entries, as ProcessesOf
  // Said once to the user with the answer, e.g. that a process exited
  // having unmapped its memory (and how to see it).
  std::vector<std::string> notes;
};

// "peak" means the most bytes mapped, or the most committed (--by commit).
enum class PeakOf { kMapped, kCommitted };

// The process entries `pid` names (every entry without one).
std::vector<uint32_t> ProcessesOf(const index::TraceIndex& idx, std::optional<uint32_t> pid);
// What no --pid names: every entry, or in a system-wide recording those with
// a memory call (all if none has one).
std::vector<uint32_t> DefaultProcesses(const Session& session);
// The trace's pids, "12115, 12116", for messages.
std::string PidList(const index::TraceIndex& idx);
// The usage error for a pid the trace does not have, or OK.
absl::Status CheckPid(const index::TraceIndex& idx, std::optional<uint32_t> pid);

// A moment in the trace; "peak" is that of `processes`. `reached`: when the
// recording is known to have still run (Session::Reached()).
absl::StatusOr<uint64_t> ResolveMoment(const TimeSpec& at, const index::TraceIndex& idx,
                                       const std::vector<uint32_t>& processes, PeakOf peak,
                                       uint64_t reached = 0);

absl::StatusOr<Selection> Resolve(const SelectionRequest& request, const Session& session, PeakOf peak);

}  // namespace pageblame::session

#endif  // PAGEBLAME_SESSION_SELECTION_H_

// RecordedProcesses: the processes a recording follows, found in /proc.
// For `record -- CMD`: perf's children (the command; until it has exec'd it
// is a copy of perf waiting for perf's go-ahead, and is not followed yet) and
// their descendants. For `record -p PID`: PID and its descendants (perf
// records the children it forks too). A process found once is followed while
// it lives, also after its parent exits (a daemon's double fork reparents it
// to init); it is known by pid and start time, so a reused pid is not.
//
//   RecordedProcesses procs = RecordedProcesses::ForCommand(perf_pid);
//   for (uint32_t pid : procs.Update()) Snapshot(pid);   // each period
#ifndef PAGEBLAME_RECORDER_RECORDED_PROCESSES_H_
#define PAGEBLAME_RECORDER_RECORDED_PROCESSES_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

namespace pageblame::recorder {

// One row of the process table, from /proc/PID/stat.
struct ProcessRow {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  uint64_t start = 0;        // start time, clock ticks after boot (stat field 22)
  bool runs_perf = false;    // its executable is perf's (a child before its exec)
  char state = '?';          // R, S, D, Z (ended, not yet reaped), ... (stat field 3)
};

// The whole text of a small file of /proc or /sys (their size is not known
// before reading); "" if it cannot be read.
std::string ReadSmallFile(const std::string& path);

// Parses /proc/PID/stat text (the command name may hold spaces and ')').
std::optional<ProcessRow> ParseStat(absl::string_view text);
// The live processes, read from /proc; `perf` marks rows whose executable
// is the same file as that process's.
std::vector<ProcessRow> ReadProcessTable(std::optional<pid_t> perf);
// True if `pid` runs the same executable file as `other` (perf's child
// before its exec runs perf).
bool RunsExecutableOf(uint32_t pid, pid_t other);
// The children of `pid`, from /proc/PID/task/PID/children when the kernel has
// it (CONFIG_PROC_CHILDREN), else from the whole table.
std::vector<uint32_t> ChildrenOf(uint32_t pid);

class RecordedProcesses {
 public:
  static RecordedProcesses ForCommand(pid_t perf) { return RecordedProcesses(perf, std::nullopt); }
  static RecordedProcesses ForAttach(uint32_t pid) { return RecordedProcesses(std::nullopt, pid); }

  // Reads /proc; returns the processes to snapshot now, by pid.
  std::vector<uint32_t> Update() { return Update(ReadProcessTable(perf_)); }
  // The same from a given table (tests).
  std::vector<uint32_t> Update(const std::vector<ProcessRow>& table);

 private:
  RecordedProcesses(std::optional<pid_t> perf, std::optional<uint32_t> root) : perf_(perf), root_(root) {}
  std::optional<pid_t> perf_;
  std::optional<uint32_t> root_;
  absl::flat_hash_map<uint32_t, uint64_t> followed_;  // pid -> start time
};

}  // namespace pageblame::recorder

#endif  // PAGEBLAME_RECORDER_RECORDED_PROCESSES_H_

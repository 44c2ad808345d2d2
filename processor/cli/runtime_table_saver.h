// RuntimeTableSaver: while `pageblame record` records, the .NET runtime's
// own table of each recorded .NET process, saved beside the trace at the stop
// snapshot and at each requested one (SIGUSR1), so that `attribute -i TRACE
// --unaccounted` needs no dump (regions/runtime_table_store.h). Each table is
// `pageblame dotnet-regions -p PID` run as a child of this program (ClrMD
// stops the process while it reads: ~0.1-0.5 s, which is why periodic
// snapshots do not take one). A failure (no ClrMD helper, no dotnet, the
// process gone) is said once per message, and the recording goes on. The
// helper prints the table; it is written here, into a file made new in the
// directory made new for this recording (recorder/recording_files.h: the
// tables of an older trace were set aside with it before perf started).
//
//   RuntimeTableSaver saver(files.get());
//   run_options.on_snapshot = [&](auto& pids, auto reason) { saver.OnSnapshot(pids, reason); };
#ifndef PAGEBLAME_CLI_RUNTIME_TABLE_SAVER_H_
#define PAGEBLAME_CLI_RUNTIME_TABLE_SAVER_H_

#include <time.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "processor/recorder/recording_files.h"
#include "processor/residency/residency_snapshot.h"

namespace pageblame::cli {

class RuntimeTableSaver {
 public:
  // `files` outlives the saver. `clock`: the trace's (perf's -k).
  explicit RuntimeTableSaver(recorder::RecordingFiles* files, clockid_t clock = CLOCK_MONOTONIC)
      : files_(files), clock_(clock) {}

  void OnSnapshot(const std::vector<uint32_t>& pids, residency::SnapshotReason reason);
  int saved() const { return saved_; }
  // The CPU time of the helper's runs (children of this process).
  double helper_cpu_seconds() const { return helper_cpu_seconds_; }

  // Whether `pid` runs .NET (maps libcoreclr.so).
  static bool IsDotnet(uint32_t pid);

 private:
  void Save(uint32_t pid);
  void Warn(const std::string& message);

  recorder::RecordingFiles* const files_;
  const clockid_t clock_;
  int saved_ = 0;
  double helper_cpu_seconds_ = 0;
  std::set<std::string> warned_;   // each message said once
};

}  // namespace pageblame::cli

#endif  // PAGEBLAME_CLI_RUNTIME_TABLE_SAVER_H_

// SnapshotLoop: the recorder's own thread while perf records. It takes a
// snapshot of every recorded process every `every` seconds, one when the user
// asks (SIGUSR1 to `pageblame record`), and one when the recording is
// stopped (SIGINT or SIGTERM): that one is taken before the signal is passed
// on to perf, so it falls inside the trace. Without a taker (snapshots off)
// it only passes the stop signals on.
//
// Nothing is taken before perf records (WaitForPerf): a snapshot stamped
// before perf's clock reference would make the whole file look like another
// trace's (residency/residency_index.h refuses snapshots from before the
// recording began), and perf can take seconds to start on a busy machine.
// The first snapshot is taken as soon as perf records.
//
// The signals come through a signalfd: the caller blocks SIGINT, SIGTERM and
// SIGUSR1 in every thread before it starts any (perf's child unblocks them
// before its exec). A terminal's Ctrl-C reaches perf and the command as well
// as this loop, so perf may already be stopping while that snapshot is read.
//
//   SnapshotLoop loop(&taker, RecordedProcesses::ForCommand(perf), perf, signal_fd, 1.0);
//   loop.Start();
//   ... wait for perf ...
//   loop.Finish(true);   // a stop snapshot of what still lives, if none was taken
#ifndef PAGEBLAME_RECORDER_SNAPSHOT_LOOP_H_
#define PAGEBLAME_RECORDER_SNAPSHOT_LOOP_H_

#include <sys/types.h>

#include <functional>
#include <thread>
#include <vector>

#include "processor/recorder/recorded_processes.h"
#include "processor/recorder/snapshot_taker.h"

namespace pageblame::recorder {

class SnapshotLoop {
 public:
  // `taker` may be null (snapshots off); `every` 0: no periodic snapshots.
  SnapshotLoop(SnapshotTaker* taker, RecordedProcesses processes, pid_t perf, int signal_fd, double every)
      : taker_(taker), processes_(std::move(processes)), perf_(perf), signal_fd_(signal_fd), every_(every) {}
  ~SnapshotLoop();
  SnapshotLoop(const SnapshotLoop&) = delete;
  SnapshotLoop& operator=(const SnapshotLoop&) = delete;

  // Before Start: when process `pid` ends, stop perf (SIGINT) as a stop
  // signal would, without a snapshot (nothing is left to take). For a
  // recording perf does not end by itself when the process does (per CPU,
  // limited to its cgroup).
  void StopPerfWhenGone(uint32_t pid);
  // Before Start: called on this loop's thread after each snapshot with the
  // processes it was of (record saves .NET runtime tables then).
  using SnapshotHook = std::function<void(const std::vector<uint32_t>& pids, residency::SnapshotReason reason)>;
  void OnSnapshot(SnapshotHook hook) { on_snapshot_ = std::move(hook); }
  // Before Start: called on this loop's thread before it passes a stop on
  // to perf (after the stop snapshot): the recorder drains perf then.
  void BeforeStop(std::function<void()> hook) { before_stop_ = std::move(hook); }
  // Before Start: snapshots wait until `ready` says perf records (asked
  // every kReadyPollMs on this loop's thread); then `on_ready` runs there,
  // once, before the first snapshot. Without it perf counts as ready at once.
  void WaitForPerf(std::function<bool()> ready, std::function<void()> on_ready) {
    ready_fn_ = std::move(ready);
    on_ready_ = std::move(on_ready);
  }
  static constexpr int kReadyPollMs = 20;
  void Start();
  // Ends the thread. With `stop_snapshot` (perf ended by itself, and well:
  // the command or the attached process ended) then takes a stop snapshot
  // of the recorded processes still alive, if no stop snapshot was taken
  // and perf ever recorded.
  void Finish(bool stop_snapshot);

 private:
  void Run();
  // One snapshot of every recorded process; says on stderr what it took
  // when `say` (a requested one: the user waits for it).
  void Snapshot(residency::SnapshotReason reason, bool say);
  void OnSignal(int sig);
  void OnTargetGone();
  // Whether perf records now (asks ready_fn_ until it says yes, then runs
  // on_ready_ and takes the first snapshot).
  bool CheckReady();

  SnapshotTaker* taker_;
  RecordedProcesses processes_;
  const pid_t perf_;
  const int signal_fd_;
  const double every_;
  int wake_[2] = {-1, -1};  // Finish() writes to wake_[1]
  int target_fd_ = -1;      // pidfd of StopPerfWhenGone's process
  uint32_t target_ = 0;
  bool stopped_ = false;    // a stop snapshot was taken
  bool ready_ = false;      // perf records (WaitForPerf)
  std::function<bool()> ready_fn_;
  std::function<void()> on_ready_;
  std::thread thread_;
  SnapshotHook on_snapshot_;
  std::function<void()> before_stop_;
};

}  // namespace pageblame::recorder

#endif  // PAGEBLAME_RECORDER_SNAPSHOT_LOOP_H_

// PerfRun: runs `perf record` as a child and, while it records, the
// residency snapshots of the processes it records (snapshot_loop.h: periodic,
// requested by SIGUSR1, at the stop; exit_tracer.h: at the command's exit)
// into the trace's snapshot file, TRACE.rss.
//
// With `control`, perf is pinged while it records and drained before the
// command's exit and before a stop signal is passed on (perf_control.h).
//
// Nothing is taken before perf records: with `control`, until perf answered
// a ping (its events are on), else until it wrote its header (its clock
// reference is taken). Then, attached, the kernel's table of the recorded
// processes' mappings is saved (TRACE.attach-maps: replay/attach_maps.h),
// and the first snapshot taken.
//
// Signals: SIGINT and SIGTERM to `pageblame record` stop the recording (a
// stop snapshot, then the signal is passed on to perf, which writes the
// trace whole); SIGUSR1 asks for a snapshot. They are blocked in every
// thread and read from a signalfd while perf runs; perf's child gets the
// mask and dispositions pageblame had. SIGUSR1 stays ignored afterwards, so
// a late request cannot kill the summary.
//
//   PerfRunOptions o;  o.argv = plan.PerfArgv(files->perf_output());  o.files = files.get();  o.rss_every = 1;
//   PerfRunResult r = RunPerf(o);
#ifndef PAGEBLAME_RECORDER_PERF_RUN_H_
#define PAGEBLAME_RECORDER_PERF_RUN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "processor/recorder/recording_files.h"
#include "processor/recorder/snapshot_loop.h"
#include "processor/recorder/snapshot_taker.h"

namespace pageblame::recorder {

struct PerfRunOptions {
  std::vector<std::string> argv;  // {"perf", "record", ...}
  std::vector<std::string> env;   // "NAME=value" added for perf and the command, unless already set
  // The recording's files (recording_files.h): perf's -o is its
  // perf_output(), the snapshots go beside it. Null: the trace goes to
  // standard output (-o -), no snapshots.
  RecordingFiles* files = nullptr;
  std::optional<uint32_t> attach;  // -p PID; else perf runs the command
  // perf records per CPU (-a -G): it does not end when `attach` does, so
  // the recorder stops it then.
  bool stop_when_attached_ends = false;
  // After each snapshot, on the recorder's thread, before a stop signal is
  // passed on to perf (SnapshotLoop::OnSnapshot).
  SnapshotLoop::SnapshotHook on_snapshot;
  // Seconds between snapshots; 0: no snapshots at all (no file; the
  // command is still stopped at its exit when `control` drains perf there).
  double rss_every = 1;
  // record --max-size: TRACE.rss and TRACE.heap each kept within this many
  // bytes, thinned by age (snapshot_writer.h); 0: they only grow.
  uint64_t snapshot_budget = 0;
  clockid_t clockid = CLOCK_MONOTONIC;  // perf's --clockid
  // perf compresses (-z) and takes `--control` pings (5.12+): keep it
  // writing out what it reads, so the trace's end is not lost inside zstd
  // (perf_control.h).
  bool control = false;
  // A library perf gets preloaded (LD_PRELOAD, before any the user set):
  // recorder/perf_poll_fix.h. "": none.
  std::string preload;
  // perf's nice once it records (setpriority on its pid, its main thread,
  // which reads the ring buffers): the command it runs was forked before and
  // keeps its own. 0: left as it is. A raise that is not permitted (no
  // CAP_SYS_NICE) is no failure: PerfRunResult::perf_nice_error says so.
  int perf_nice = 0;
  // perf's standard error passes through a pipe whose end is kept
  // (stderr_tail.h), to quote when perf fails. Only with `attach`: a
  // command perf runs would inherit the pipe.
  bool keep_stderr = false;
};

struct PerfRunResult {
  int perf_exit = -1;  // perf's exit code, 128+N if killed by signal N (SIGINT: 0); -1: not run
  bool snapshots = false;  // snapshots were on
  TakerSummary summary;
  std::string note;  // why there is no exit snapshot, if it cannot be had
  // perf's CPU time (user+system, with the children it waited for: under
  // `-- CMD` the command's too) and the recording's wall time, in seconds.
  double perf_cpu_seconds = 0;
  double wall_seconds = 0;
  std::string perf_stderr;  // the end of what perf wrote, with keep_stderr
  bool perf_recorded = false;   // perf got as far as recording
  bool preload_loaded = false;  // `preload` was mapped in perf then
  // TRACE.attach-maps as written, or why it was not ("" both: not attached,
  // or perf never recorded).
  std::string attach_maps;
  std::string attach_maps_error;
  // Why `perf_nice` could not be set ("" if it was, or was 0).
  std::string perf_nice_error;
  // pageblame's own CPU time meanwhile (its threads: snapshots, pings).
  double self_cpu_seconds = 0;
};

PerfRunResult RunPerf(const PerfRunOptions& options);

}  // namespace pageblame::recorder

#endif  // PAGEBLAME_RECORDER_PERF_RUN_H_

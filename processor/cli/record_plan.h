// The perf command `pageblame record` runs: the memory syscalls' enter and
// exit tracepoints (those the kernel has), call chains on the enters only
// (DWARF: a 16 KiB stack copy per call; the exits need none), a buffer big
// enough not to lose samples, zstd compression when perf has it, and -d
// when attaching (perf then reports the mappings that already exist), and
// CLOCK_MONOTONIC for the timestamps (-k mono), the clock the residency
// snapshots are stamped with (a user program cannot read perf's own clock).
// Built from plain facts so tests can check it without running perf.
//
//   RecordPlan plan;  plan.command = {"./server", "--port", "80"};
//   plan.available = {"mmap", "munmap", ...};   // tracepoints the kernel has
//   std::vector<std::string> argv = plan.PerfArgv();  // {"perf", "record", ...}
#ifndef PAGEBLAME_CLI_RECORD_PLAN_H_
#define PAGEBLAME_CLI_RECORD_PLAN_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "processor/session/session.h"

namespace pageblame::cli {

struct RecordPlan {
  enum class CallGraph { kDwarf, kFp };
  std::optional<uint32_t> pid;        // -p: attach
  // With pid: the cgroup it is alone in (recorder/target_cgroup.h), to
  // record per CPU limited to it (perf -a -G) instead of per thread (-p).
  std::string cgroup;
  std::vector<std::string> command;   // or run this
  std::string output = session::kDefaultTracePath;
  // What perf's -o gets, when not `output` itself (recorder/recording_files.h:
  // /proc/self/fd/N where the trace's path could be swapped under perf).
  std::string perf_output;
  bool force = false;  // --force: a directory others may write is taken
  CallGraph call_graph = CallGraph::kDwarf;
  // The syscalls whose syscalls:sys_{enter,exit}_X tracepoints exist here
  // (all seven if unknown).
  std::set<std::string> available;
  bool compress = true;  // perf was built with zstd
  // perf has --no-bpf-event (5.1+): no side-band thread, which polls its own
  // per-thread events and spins once a thread ends (recorder/perf_poll_shim.c);
  // record asks for no BPF events anyway.
  bool no_bpf_event = false;
  // Seconds between residency snapshots (0: none at all); they go to
  // SnapshotPath().
  double rss_every = 1;
  // --max-size: the bound on the recording's disk, 0 for none. perf cuts
  // its output into chunks of ChunkSize() (--switch-output), which the
  // recorder folds into the index and removes (recorder/chunk_folder.h).
  uint64_t max_size = 0;
  // --checkpoint-every: seconds between the folded index's checkpoints
  // while perf records (recorder/chunk_folder.h; 0: none).
  double checkpoint_every = 60;
  // --max-memory: the bound on the index the folding keeps in memory (its
  // calls, versions, stacks, strings, live regions: recorder/chunk_folder.h);
  // 0: max_size.
  uint64_t max_memory = 0;
  uint64_t MemoryBound() const { return max_memory != 0 ? max_memory : max_size; }
  // perf's --switch-output size: an eighth of max_size (the chunk perf is
  // writing, one being folded, and perf's overshoot at a cut: it cuts only
  // after writing what it read from its buffers), at least 64 KiB.
  uint64_t ChunkSize() const;
  // "4M", "512K", "1G", "65536": bytes, with an optional K/M/G (powers of 1024).
  static bool ParseSize(const std::string& text, uint64_t* bytes);

  // perf's --clockid, and the clock the snapshots read.
  static constexpr const char* kClockName = "mono";

  // The memory syscalls replay knows (decode::SyscallName), in decode::Syscall order.
  static const std::vector<std::string>& MemorySyscalls();
  // The syscalls to record: MemorySyscalls() that are available.
  std::vector<std::string> Syscalls() const;
  std::vector<std::string> PerfArgv() const;
  // From `perf version`'s line ("perf version 6.1.187"): perf 5.12 and
  // later answer `--control` pings (the ping came with perf daemon), which
  // record uses to keep -z traces whole (recorder/perf_control.h).
  static bool AnswersPing(const std::string& perf_version_line);
  // Likewise, whether it knows --no-bpf-event (perf 5.1+).
  static bool KnowsNoBpfEvent(const std::string& perf_version_line);
  // perf's -m: the ring buffer per CPU, by stack mode and attach.
  const char* BufferSize() const;
  // perf's nice once it records (recorder/perf_run.h: its command, forked
  // before, keeps its own): kMaxSizePerfNice with --max-size, else 0 (left
  // as it is).
  int PerfNice() const;
  static constexpr int kMaxSizePerfNice = -10;
  // What the summary advises when perf lost events, from what the
  // recording did: with --max-size, perf cut `chunks` chunks holding
  // `chunk_bytes` in `wall_seconds` (its cuts, and a bound that has it cut
  // about once a second), and why its nice could not be raised ("" if it
  // was); else a bigger buffer.
  std::string LostHint(uint64_t chunks, uint64_t chunk_bytes, double wall_seconds,
                       const std::string& nice_error) const;
  // Where the residency snapshots go: OUTPUT.rss; "" when there are none
  // (--rss-every 0, or the trace goes to standard output).
  std::string SnapshotPath() const;
  // The environment the recorded command gets on top of pageblame's own:
  // DOTNET_PerfMapEnabled=1 (.NET writes /tmp/perf-PID.map for its JIT code
  // and /tmp/jit-PID.dump, which names ReadyToRun code too) and
  // DOTNET_PerfMapStubGranularity=2 (a whole jitdump on .NET 10); other
  // programs ignore them, and a variable the user set is kept.
  std::vector<std::string> ExtraEnvironment() const;
  // Advice for runtimes whose JIT frames need a flag to be named or
  // unwound (node without --perf-basic-prof, java without a perf map agent),
  // judged from the command line (or the attached process's).
  static std::vector<std::string> RuntimeHints(const std::vector<std::string>& command_line);
};

}  // namespace pageblame::cli

#endif  // PAGEBLAME_CLI_RECORD_PLAN_H_

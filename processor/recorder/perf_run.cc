#include "processor/recorder/perf_run.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <functional>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "processor/recorder/exit_tracer.h"
#include "processor/recorder/perf_control.h"
#include "processor/recorder/perf_poll_fix.h"
#include "processor/recorder/recorded_processes.h"
#include "processor/recorder/snapshot_loop.h"
#include "processor/recorder/stderr_tail.h"
#include "processor/replay/attach_maps.h"

namespace pageblame::recorder {
namespace {

// perf's control FIFOs, their arguments put after "perf record"; null
// (said on stderr) if they cannot be made: the recording goes on without.
std::unique_ptr<PerfControl> OpenControl(std::vector<std::string>* argv) {
  absl::StatusOr<std::unique_ptr<PerfControl>> control = PerfControl::Open();
  if (!control.ok()) {
    std::fprintf(stderr,
                 "pageblame record: warning: %s: perf's last compressed records may be lost at the end\n",
                 std::string(control.status().message()).c_str());
    return nullptr;
  }
  const std::vector<std::string> args = (*control)->PerfArgs();
  argv->insert(argv->begin() + std::min<size_t>(2, argv->size()), args.begin(), args.end());
  return *std::move(control);
}

// What is done with the command stopped at its exit (null: nothing, no
// tracing): its exit snapshot, then perf drained, all the command did being
// in the ring buffers, its EXIT records a small last batch after. A child
// that never became the command (its exec failed) still runs perf: nothing
// of the command to take.
ExitTracer::ExitHook AtCommandExit(SnapshotTaker* taker, PerfControl* control, pid_t perf) {
  if (taker == nullptr && control == nullptr) return nullptr;
  return [taker, control, perf](uint32_t pid) {
    if (taker != nullptr && !RunsExecutableOf(pid, perf)) taker->Take({pid}, residency::SnapshotReason::kExit);
    if (control != nullptr) control->Drain();
  };
}

// Without an answer to a ping for this long after perf wrote its header
// (its control FIFO could not be opened), perf is taken to record.
constexpr std::chrono::seconds kNoAnswerGrace{15};

uint64_t NowNs(clockid_t clock) {
  timespec t = {};
  ::clock_gettime(clock, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000 + static_cast<uint64_t>(t.tv_nsec);
}

// The kernel's table of each process's mappings now, with when each read
// began and ended, into TRACE.attach-maps.
absl::Status SaveAttachMaps(RecordingFiles* files, const std::vector<uint32_t>& pids, clockid_t clock) {
  std::vector<replay::AttachMaps::Read> reads;
  for (uint32_t pid : pids) {
    replay::AttachMaps::Read r;
    r.pid = pid;
    r.from = NowNs(clock);
    r.maps = ReadSmallFile(absl::StrCat("/proc/", pid, "/maps"));
    r.to = NowNs(clock);
    if (!r.maps.empty()) reads.push_back(std::move(r));  // else gone meanwhile
  }
  if (reads.empty()) return absl::NotFoundError("the recorded processes had ended");
  return files->WriteAttachMaps(replay::AttachMaps::Format(static_cast<int32_t>(clock), reads));
}

// Whether perf records: see perf_run.h.
std::function<bool()> PerfRecords(PerfControl* control, RecordingFiles* files) {
  if (files == nullptr) return control != nullptr ? std::function<bool()>([control] { return control->Answered(); })
                                                  : std::function<bool()>();
  auto header_since = std::make_shared<std::chrono::steady_clock::time_point>();
  return [control, files, header_since] {
    if (control != nullptr && control->Answered()) return true;
    if (!files->PerfWroteHeader()) return false;
    if (control == nullptr) return true;
    const auto now = std::chrono::steady_clock::now();
    if (*header_since == std::chrono::steady_clock::time_point()) *header_since = now;
    return now - *header_since >= kNoAnswerGrace;
  };
}

// The signal dispositions RunPerf changes, as they were: perf and the
// command it runs get them back.
struct OldSignals {
  struct sigaction usr1 = {}, intr = {}, term = {};
};

void RestoreSignals(const OldSignals& old, const sigset_t& old_mask) {
  sigaction(SIGINT, &old.intr, nullptr);
  sigaction(SIGTERM, &old.term, nullptr);
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
}

[[noreturn]] void ExecPerf(const PerfRunOptions& o, const StderrTail* tail, const sigset_t& old_mask,
                          const OldSignals& old, pid_t recorder) {
  // A recorder killed with SIGKILL (the OOM killer, kill -9) would leave
  // perf recording, its files growing, for ever: perf gets SIGTERM then
  // and stops as at Ctrl-C. (Already gone before this line: stop now.)
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != recorder) _exit(128 + SIGTERM);
  sigaction(SIGUSR1, &old.usr1, nullptr);
  sigaction(SIGINT, &old.intr, nullptr);
  sigaction(SIGTERM, &old.term, nullptr);
  if (tail != nullptr) tail->InChild();
  // perf opens /proc/self/fd/N: the trace made for it must stay open.
  if (o.files != nullptr && o.files->perf_fd() >= 0) ::fcntl(o.files->perf_fd(), F_SETFD, 0);
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  // Ours first; the user's own preloads stay after it.
  if (!o.preload.empty()) {
    const char* theirs = std::getenv("LD_PRELOAD");
    const std::string both = theirs != nullptr && *theirs != '\0' ? absl::StrCat(o.preload, ":", theirs) : o.preload;
    setenv("LD_PRELOAD", both.c_str(), /*overwrite=*/1);
  }
  // A variable the user set stays theirs (DOTNET_PerfMapEnabled=3, say).
  for (const std::string& kv : o.env) {
    const size_t eq = kv.find('=');
    if (eq != std::string::npos) setenv(kv.substr(0, eq).c_str(), kv.c_str() + eq + 1, /*overwrite=*/0);
  }
  std::vector<char*> args;
  for (const std::string& a : o.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execvp(args[0], args.data());
  std::fprintf(stderr, "pageblame record: cannot run perf: %s\n", std::strerror(errno));
  _exit(127);
}

int ExitCode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (!WIFSIGNALED(status)) return -1;
  return WTERMSIG(status) == SIGINT ? 0 : 128 + WTERMSIG(status);
}

// Reads the signals still queued, so none acts once they are unblocked.
void Drain(int signal_fd) {
  signalfd_siginfo info;
  while (::read(signal_fd, &info, sizeof(info)) == sizeof(info)) {
  }
}

// CPU seconds of the children waited for so far (RUSAGE_CHILDREN), or of
// this process's threads (RUSAGE_SELF).
double CpuSeconds(int who) {
  rusage u = {};
  ::getrusage(who, &u);
  auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return seconds(u.ru_utime) + seconds(u.ru_stime);
}

double MonotonicSeconds() {
  timespec t = {};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

}  // namespace

PerfRunResult RunPerf(const PerfRunOptions& options) {
  PerfRunResult result;
  PerfRunOptions o = options;
  std::unique_ptr<PerfControl> control = o.control ? OpenControl(&o.argv) : nullptr;
  // Blocked before any thread or child exists, so every thread inherits it
  // and no signal is lost before the loop reads them.
  sigset_t signals, old_mask;
  sigemptyset(&signals);
  for (int sig : {SIGINT, SIGTERM, SIGUSR1}) sigaddset(&signals, sig);
  sigprocmask(SIG_BLOCK, &signals, &old_mask);
  OldSignals old;
  struct sigaction ignore = {}, by_default = {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGUSR1, &ignore, &old.usr1);  // once unblocked: a late request does nothing
  // A script's background job (nohup ... &) starts with SIGINT ignored, and
  // an ignored signal never reaches the signalfd: `kill -INT` would not stop
  // the recording. Blocked, the default action never runs either.
  by_default.sa_handler = SIG_DFL;
  sigaction(SIGINT, &by_default, &old.intr);
  sigaction(SIGTERM, &by_default, &old.term);
  const int signal_fd = ::signalfd(-1, &signals, SFD_NONBLOCK | SFD_CLOEXEC);
  std::unique_ptr<StderrTail> tail = o.keep_stderr ? std::make_unique<StderrTail>() : nullptr;
  const double cpu_before = CpuSeconds(RUSAGE_CHILDREN), self_before = CpuSeconds(RUSAGE_SELF);
  const double start = MonotonicSeconds();
  const pid_t recorder = ::getpid();
  const pid_t perf = fork();
  if (perf == 0) ExecPerf(o, tail.get(), old_mask, old, recorder);
  if (tail) tail->Start();
  if (perf < 0 || signal_fd < 0) {
    if (signal_fd >= 0) ::close(signal_fd);
    RestoreSignals(old, old_mask);
    return result;
  }
  if (control) control->Start();
  result.snapshots = o.rss_every > 0 && o.files != nullptr;
  std::unique_ptr<SnapshotTaker> taker;
  if (result.snapshots) taker = std::make_unique<SnapshotTaker>(o.files, o.clockid);
  if (taker) taker->ThinWithin(o.snapshot_budget);
  // The command's pid before its exec is perf's copy: its heap is perf's.
  if (taker && !o.attach) taker->SkipHeapOf([perf](uint32_t pid) { return RunsExecutableOf(pid, perf); });
  SnapshotLoop loop(taker.get(),
                    o.attach ? RecordedProcesses::ForAttach(*o.attach) : RecordedProcesses::ForCommand(perf), perf,
                    signal_fd, o.rss_every);
  if (o.attach && o.stop_when_attached_ends) loop.StopPerfWhenGone(*o.attach);
  if (o.on_snapshot) loop.OnSnapshot(o.on_snapshot);
  loop.WaitForPerf(PerfRecords(control.get(), o.files), [&result, &o, perf] {
    result.perf_recorded = true;
    if (o.perf_nice != 0 && ::setpriority(PRIO_PROCESS, static_cast<id_t>(perf), o.perf_nice) != 0) {
      result.perf_nice_error = std::strerror(errno);
    }
    if (!o.preload.empty()) result.preload_loaded = PerfPollFix::LoadedIn(perf, o.preload);
    if (!o.attach || o.files == nullptr) return;
    absl::Status s = SaveAttachMaps(o.files, RecordedProcesses::ForAttach(*o.attach).Update(), o.clockid);
    if (s.ok()) result.attach_maps = o.files->AttachMapsPath();
    else result.attach_maps_error = std::string(s.message());
  });
  if (control) loop.BeforeStop([&control] { control->Drain(); });
  loop.Start();
  const ExitTracer::ExitHook on_exit = o.attach ? nullptr : AtCommandExit(taker.get(), control.get(), perf);
  const int status = ExitTracer::Supervise(perf, on_exit, &result.note);
  if (control) control->Stop();
  result.perf_cpu_seconds = CpuSeconds(RUSAGE_CHILDREN) - cpu_before;
  result.self_cpu_seconds = CpuSeconds(RUSAGE_SELF) - self_before;
  result.wall_seconds = MonotonicSeconds() - start;
  // A perf that failed recorded nothing: no snapshot (no file) after it.
  loop.Finish(status >= 0 && ExitCode(status) == 0);
  Drain(signal_fd);
  ::close(signal_fd);
  RestoreSignals(old, old_mask);
  result.perf_exit = status < 0 ? -1 : ExitCode(status);
  if (tail) result.perf_stderr = tail->Finish();
  if (taker) result.summary = taker->Summary();
  return result;
}

}  // namespace pageblame::recorder

#include "processor/recorder/perf_run.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "processor/recorder/exit_tracer.h"
#include "processor/recorder/perf_control.h"
#include "processor/recorder/recorded_processes.h"
#include "processor/recorder/snapshot_loop.h"
#include "processor/recorder/stderr_tail.h"

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

[[noreturn]] void ExecPerf(const PerfRunOptions& o, const StderrTail* tail, const sigset_t& old_mask,
                          const struct sigaction& old_usr1) {
  sigaction(SIGUSR1, &old_usr1, nullptr);
  if (tail != nullptr) tail->InChild();
  // perf opens /proc/self/fd/N: the trace made for it must stay open.
  if (o.files != nullptr && o.files->perf_fd() >= 0) ::fcntl(o.files->perf_fd(), F_SETFD, 0);
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
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

// CPU seconds of the children waited for so far.
double ChildrenCpuSeconds() {
  rusage u = {};
  ::getrusage(RUSAGE_CHILDREN, &u);
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
  struct sigaction ignore = {}, old_usr1 = {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGUSR1, &ignore, &old_usr1);  // once unblocked: a late request does nothing
  const int signal_fd = ::signalfd(-1, &signals, SFD_NONBLOCK | SFD_CLOEXEC);
  std::unique_ptr<StderrTail> tail = o.keep_stderr ? std::make_unique<StderrTail>() : nullptr;
  const double cpu_before = ChildrenCpuSeconds(), start = MonotonicSeconds();
  const pid_t perf = fork();
  if (perf == 0) ExecPerf(o, tail.get(), old_mask, old_usr1);
  if (tail) tail->Start();
  if (perf < 0 || signal_fd < 0) {
    if (signal_fd >= 0) ::close(signal_fd);
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    return result;
  }
  if (control) control->Start();
  result.snapshots = o.rss_every > 0 && o.files != nullptr;
  std::unique_ptr<SnapshotTaker> taker;
  if (result.snapshots) taker = std::make_unique<SnapshotTaker>(o.files, o.clockid);
  SnapshotLoop loop(taker.get(),
                    o.attach ? RecordedProcesses::ForAttach(*o.attach) : RecordedProcesses::ForCommand(perf), perf,
                    signal_fd, o.rss_every);
  if (o.attach && o.stop_when_attached_ends) loop.StopPerfWhenGone(*o.attach);
  if (o.on_snapshot) loop.OnSnapshot(o.on_snapshot);
  if (control) loop.BeforeStop([&control] { control->Drain(); });
  loop.Start();
  const ExitTracer::ExitHook on_exit = o.attach ? nullptr : AtCommandExit(taker.get(), control.get(), perf);
  const int status = ExitTracer::Supervise(perf, on_exit, &result.note);
  if (control) control->Stop();
  result.perf_cpu_seconds = ChildrenCpuSeconds() - cpu_before;
  result.wall_seconds = MonotonicSeconds() - start;
  // A perf that failed recorded nothing: no snapshot (no file) after it.
  loop.Finish(status >= 0 && ExitCode(status) == 0);
  Drain(signal_fd);
  ::close(signal_fd);
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  result.perf_exit = status < 0 ? -1 : ExitCode(status);
  if (tail) result.perf_stderr = tail->Finish();
  if (taker) result.summary = taker->Summary();
  return result;
}

}  // namespace pageblame::recorder

#include "processor/recorder/exit_tracer.h"

#include <poll.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "processor/recorder/debugger_watch.h"
#include "processor/recorder/recorded_processes.h"

namespace pageblame::recorder {
namespace {

void SleepMs(int ms) {
  timespec ts{0, ms * 1000000L};
  nanosleep(&ts, nullptr);
}

bool IsStopSignal(int sig) { return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU; }

bool Ended(int status) { return WIFEXITED(status) || WIFSIGNALED(status); }

}  // namespace

pid_t ExitTracer::FindCommand(pid_t perf, int* perf_status, bool* perf_done) {
  // perf forks the command before it opens its events (tens to hundreds of
  // milliseconds before the exec): look every millisecond at first.
  for (int tries = 0;; ++tries) {
    const std::vector<uint32_t> kids = ChildrenOf(static_cast<uint32_t>(perf));
    if (!kids.empty()) return static_cast<pid_t>(kids.front());
    if (waitpid(perf, perf_status, WNOHANG) == perf && Ended(*perf_status)) {
      *perf_done = true;
      return 0;
    }
    SleepMs(tries < 2000 ? 1 : 20);
  }
}

int ExitTracer::Supervise(pid_t perf, const ExitHook& on_exit, std::string* note) {
  int status = 0;
  bool perf_done = false;
  if (on_exit) {
    const pid_t command = FindCommand(perf, &status, &perf_done);
    if (perf_done) return status;
    if (command > 0 && Seize(command)) return WhileTraced(perf, command, on_exit, note);
    if (command > 0) {
      *note = absl::StrCat("cannot trace the command (pid ", command, ") for a snapshot at its exit: ",
                           std::strerror(errno), "; its last snapshot is the last periodic one");
    }
  }
  while (waitpid(perf, &status, 0) < 0) {
    if (errno != EINTR) return -1;  // perf is not our child (cannot happen)
  }
  return status;
}

bool ExitTracer::Seize(pid_t command) {
  return ptrace(PTRACE_SEIZE, command, nullptr, reinterpret_cast<void*>(PTRACE_O_TRACEEXIT)) == 0;
}

int ExitTracer::WhileTraced(pid_t perf, pid_t command, const ExitHook& on_exit, std::string* note) {
  const std::unique_ptr<DebuggerWatch> watch = DebuggerWatch::Open(command);
  if (watch == nullptr) {
    *note = "no process events here (not root, or a container's own network namespace): a debugger or "
            "dumper (dotnet-dump collect, gdb -p) could not attach to the command while it was recorded";
  }
  bool traced = true;
  int status = 0;
  for (;;) {
    // Only perf and the command are waited for: a helper record runs
    // meanwhile (the .NET table) waits for its own child.
    const pid_t p = waitpid(perf, &status, WNOHANG);
    if (p < 0 && errno != EINTR) return -1;
    if (p == perf && Ended(status)) break;
    int command_status;
    if (traced && waitpid(command, &command_status, __WALL | WNOHANG) == command) {
      if (!OnTraceeStop(command, command_status, on_exit)) {
        traced = false;
        command = 0;
      }
      continue;
    }
    pollfd events = {watch ? watch->fd() : -1, POLLIN, 0};
    ::poll(&events, 1, kWaitMs);
    if (watch && command > 0) StepAside(*watch, command, &traced);
  }
  if (traced) Release(command);
  return status;
}

void ExitTracer::StepAside(DebuggerWatch& watch, pid_t command, bool* traced) {
  for (const DebuggerWatch::Debugger& d : watch.Started()) {
    if (!*traced) continue;
    std::fprintf(stderr,
                 "pageblame record: %s is about to trace pid %d: let go meanwhile (no exit snapshot if "
                 "it ends then)\n",
                 d.name.c_str(), command);
    Release(command);
    *traced = false;
  }
  if (*traced || !watch.AllGone() || ::kill(command, 0) != 0) return;
  if (Seize(command)) {
    std::fprintf(stderr, "pageblame record: pid %d traced again for its exit snapshot\n", command);
    *traced = true;
  }
}

bool ExitTracer::OnTraceeStop(pid_t tracee, int status, const ExitHook& on_exit) {
  if (Ended(status)) return false;
  if (!WIFSTOPPED(status)) return true;
  const int sig = WSTOPSIG(status);
  const int event = status >> 16;
  if (event == PTRACE_EVENT_EXIT) {
    on_exit(static_cast<uint32_t>(tracee));
    ptrace(PTRACE_DETACH, tracee, nullptr, nullptr);
    return false;
  }
  if (event == PTRACE_EVENT_STOP) {
    // A group stop (SIGSTOP, SIGTSTP, ...): stay stopped until SIGCONT, as
    // without a tracer; any other event stop: go on.
    ptrace(IsStopSignal(sig) ? PTRACE_LISTEN : PTRACE_CONT, tracee, nullptr, nullptr);
    return true;
  }
  // A signal on its way to the command: deliver it.
  ptrace(PTRACE_CONT, tracee, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(event == 0 ? sig : 0)));
  return true;
}

void ExitTracer::Release(pid_t tracee) {
  if (ptrace(PTRACE_INTERRUPT, tracee, nullptr, nullptr) != 0) return;
  for (;;) {
    int status;
    if (waitpid(tracee, &status, __WALL) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (Ended(status)) return;
    if (!WIFSTOPPED(status)) continue;
    // A signal-delivery stop keeps its signal; an event stop has none.
    const int sig = (status >> 16) == 0 ? WSTOPSIG(status) : 0;
    ptrace(PTRACE_DETACH, tracee, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(sig)));
    return;
  }
}

}  // namespace pageblame::recorder

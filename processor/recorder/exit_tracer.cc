#include "processor/recorder/exit_tracer.h"

#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "absl/strings/str_cat.h"
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
  pid_t tracee = 0;
  if (on_exit) {
    tracee = FindCommand(perf, &status, &perf_done);
    if (perf_done) return status;
    if (tracee > 0 && ptrace(PTRACE_SEIZE, tracee, nullptr, reinterpret_cast<void*>(PTRACE_O_TRACEEXIT)) != 0) {
      *note = absl::StrCat("cannot trace the command (pid ", tracee, ") for a snapshot at its exit: ",
                           std::strerror(errno), "; its last snapshot is the last periodic one");
      tracee = 0;
    }
  }
  while (!perf_done) {
    const pid_t who = waitpid(tracee > 0 ? -1 : perf, &status, __WALL);
    if (who < 0) {
      if (errno == EINTR) continue;
      return -1;  // perf is not our child (cannot happen)
    }
    if (who == perf && Ended(status)) {
      perf_done = true;
    } else if (who == tracee && !OnTraceeStop(tracee, status, on_exit)) {
      tracee = 0;
    }
  }
  const int perf_status = status;
  if (tracee > 0) Release(tracee);
  return perf_status;
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

// ExitTracer: waits for perf to end, and on the way catches the recorded
// command at its exit with its memory still whole, for the exit snapshot.
//
// perf forks the command, which waits on perf's pipe until perf has opened
// its events and then execs. ExitTracer finds that child in /proc meanwhile
// and seizes it with ptrace (PTRACE_SEIZE, PTRACE_O_TRACEEXIT only): the
// command then runs as before, except that it stops once when its main
// thread exits (before the kernel tears its memory down), where `on_exit`
// takes the snapshot, and is let go (detached). Other stops are passed
// through as if no tracer were there: a signal is delivered again
// (re-injected), a stop signal puts it in a group stop that lasts until
// SIGCONT (PTRACE_LISTEN). A process killed by SIGKILL has no exit stop.
//
// ptrace ties a tracee to the thread that seized it: Supervise runs on one
// thread, which also waits for perf (waitpid(-1, __WALL): perf's end and
// the command's stops come to it alike).
//
//   std::string note;
//   int status = ExitTracer::Supervise(perf_pid, [&](uint32_t pid) { Snapshot(pid); }, &note);
#ifndef PAGEBLAME_RECORDER_EXIT_TRACER_H_
#define PAGEBLAME_RECORDER_EXIT_TRACER_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>

namespace pageblame::recorder {

class ExitTracer {
 public:
  using ExitHook = std::function<void(uint32_t pid)>;
  // Waits until `perf` (a child of this process) ends; returns its wait
  // status. With a hook, traces perf's child as above; if it cannot (ptrace
  // refused, the command gone before it was found), `note` says why and it
  // only waits.
  static int Supervise(pid_t perf, const ExitHook& on_exit, std::string* note);

 private:
  // perf's child, once perf has forked it; 0 if perf ended first (then
  // `perf_status` holds how).
  static pid_t FindCommand(pid_t perf, int* perf_status, bool* perf_done);
  // Handles one wait status of the tracee; false once it is no longer traced.
  static bool OnTraceeStop(pid_t tracee, int status, const ExitHook& on_exit);
  // Lets a tracee still running when perf is gone go (interrupt, detach).
  static void Release(pid_t tracee);
};

}  // namespace pageblame::recorder

#endif  // PAGEBLAME_RECORDER_EXIT_TRACER_H_

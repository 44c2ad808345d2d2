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
// A thread has one tracer: while a debugger or dumper of the command runs
// (`dotnet-dump collect`'s createdump, gdb -p, strace -p: debugger_watch.h)
// the command is let go, and traced again once it has ended.
//
// ptrace ties a tracee to the thread that seized it: Supervise runs on one
// thread, which also waits for perf. While it traces it looks at perf, the
// command and the debugger watch every kWaitMs (perf's end and the
// command's stops are handled that much later at most).
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

class DebuggerWatch;

class ExitTracer {
 public:
  static constexpr int kWaitMs = 10;
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
  static bool Seize(pid_t command);
  // Supervise once `command` is seized: perf's wait status at its end.
  // `note` says when debuggers could not be watched for.
  static int WhileTraced(pid_t perf, pid_t command, const ExitHook& on_exit, std::string* note);
  // Lets the command go when a debugger of it starts, takes it back once
  // all have ended.
  static void StepAside(DebuggerWatch& watch, pid_t command, bool* traced);
  // Handles one wait status of the tracee; false once it is no longer traced.
  static bool OnTraceeStop(pid_t tracee, int status, const ExitHook& on_exit);
  // Lets a tracee still running when perf is gone go (interrupt, detach).
  static void Release(pid_t tracee);
};

}  // namespace pageblame::recorder

#endif  // PAGEBLAME_RECORDER_EXIT_TRACER_H_

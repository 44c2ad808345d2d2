// DebuggerWatch: tells the exit tracer (exit_tracer.h) when a debugger or a
// dumper starts on the command it traces, so that it can step aside: a
// thread has one tracer at a time, and while record holds the command for
// its exit snapshot, `dotnet-dump collect` (the runtime forks createdump,
// which attaches to every thread), `gdb -p`, `strace -p` fail with EPERM
// ("Problem suspending threads").
//
// It reads every exec on the machine from the kernel's process events
// connector (netlink, CN_IDX_PROC; root) and names the ones that are
//   - createdump, a child of the command (its runtime forks it), or
//   - a debugger, tracer or dumper (gdb, lldb, strace, ltrace, gcore,
//     dotnet-dump, procdump) whose command line names the command's pid
//     ("-p 123", "--pid=123", "-p123").
// The event comes as the exec happens, before the new program has loaded
// its libraries; the tracer lets go within microseconds, long before the
// dumper attaches. Once every such process has ended the tracer takes the
// command back (AllGone()).
//
//   std::unique_ptr<DebuggerWatch> watch = DebuggerWatch::Open(command);  // null: no connector
//   poll({watch->fd(), POLLIN}, ...);
//   for (const DebuggerWatch::Debugger& d : watch->Started()) { ... let the command go ... }
//   if (watch->AllGone()) { ... trace it again ... }
#ifndef PAGEBLAME_RECORDER_DEBUGGER_WATCH_H_
#define PAGEBLAME_RECORDER_DEBUGGER_WATCH_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

namespace pageblame::recorder {

class DebuggerWatch {
 public:
  // Null if the connector cannot be had (not root, no CONFIG_PROC_EVENTS).
  static std::unique_ptr<DebuggerWatch> Open(pid_t command);
  ~DebuggerWatch();
  DebuggerWatch(const DebuggerWatch&) = delete;
  DebuggerWatch& operator=(const DebuggerWatch&) = delete;

  // Readable when events have come.
  int fd() const { return fd_; }
  // Reads the events that have come; the debuggers of the command among
  // their execs, each with a line for the user ("createdump (pid 12)").
  struct Debugger {
    pid_t pid;
    std::string name;
  };
  std::vector<Debugger> Started();
  // True once every debugger Started() returned has ended.
  bool AllGone();

  // Whether the connector can be had here and tells of execs (it tells
  // nothing inside a network namespace other than the first): execs
  // /bin/true and waits up to 2 s for its event. For tests.
  static bool Works();

  // Whether process `pid`, just exec'd, is a debugger of `command` (as
  // above), and its name then. Reads /proc.
  static bool IsDebuggerOf(pid_t pid, pid_t command, std::string* name);

 private:
  DebuggerWatch(int fd, pid_t command) : fd_(fd), command_(command) {}
  // The processes that exec'd since the last call (their tgid).
  std::vector<pid_t> Execs();

  const int fd_;
  const pid_t command_;
  std::vector<pid_t> active_;
};

}  // namespace pageblame::recorder

#endif  // PAGEBLAME_RECORDER_DEBUGGER_WATCH_H_

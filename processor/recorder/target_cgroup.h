// TargetCgroup: whether `pageblame record -p PID` can record the process per
// CPU, limited to its cgroup (perf record -a -G CGROUP), instead of per
// thread (perf record -p PID).
//
// Why: attached per thread, perf 6.1 keeps polling the event of a thread
// that has ended (the kernel hangs it up; perf stops asking for its events
// but leaves it in the poll set), so once any thread that existed at the
// attach ends — an idle thread-pool worker does, after 20 s — perf spins on
// a core (measured: 98-160 % of one, bench/attach_overhead.sh). Per-CPU
// events belong to no thread and never hang up: 0 % idle.
//
// Every process in the cgroup is recorded, so it must be small: this process
// alone (a systemd service, a container), or with at most kMaxMembers - 1
// others (a service's wrapper script, a helper it forked); their calls are
// in the trace too, and the commands take --pid. It is the cgroup perf will
// look the name up in: the cgroup v1 perf_event hierarchy if one is mounted,
// else the cgroup v2 one. The root cgroup ("/") holds everything: never used.
//
//   std::string why;
//   if (std::optional<TargetCgroup::Choice> c = TargetCgroup::SmallCgroupOf(pid, &why)) argv += {"-a", "-G", c->cgroup};
#ifndef PAGEBLAME_RECORDER_TARGET_CGROUP_H_
#define PAGEBLAME_RECORDER_TARGET_CGROUP_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace pageblame::recorder {

class TargetCgroup {
 public:
  static constexpr int kMaxMembers = 8;
  struct Choice {
    std::string cgroup;  // as perf's -G takes it: "system.slice/app.service"
    int members = 0;     // processes in it, `pid` included
  };
  // The cgroup of `pid`, if it holds `pid` and at most kMaxMembers processes
  // in all; else nullopt and `why_not` says why.
  static std::optional<Choice> SmallCgroupOf(uint32_t pid, std::string* why_not);

  // Where the hierarchy perf uses is mounted, from /proc/self/mountinfo
  // text, and whether it is v1 perf_event ("" if neither is mounted).
  struct Mount {
    std::string path;
    bool v1 = false;
  };
  static std::optional<Mount> PerfHierarchy(absl::string_view mountinfo);
  // The process's path in that hierarchy, from /proc/PID/cgroup text:
  // the "N:...perf_event...:PATH" line for v1, "0::PATH" for v2.
  static std::optional<std::string> PathIn(absl::string_view proc_cgroup, bool v1);
  // How many processes cgroup.procs text lists if `pid` is one of them; 0
  // if it is not (or the text is not a list of pids).
  static int MembersWith(absl::string_view procs, uint32_t pid);
};

}  // namespace pageblame::recorder

#endif  // PAGEBLAME_RECORDER_TARGET_CGROUP_H_

#include "processor/recorder/target_cgroup.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "processor/recorder/recorded_processes.h"

namespace pageblame::recorder {

// mountinfo lines: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS".
// perf looks for a v1 perf_event hierarchy first (cgroupfs_find_mountpoint()).
std::optional<TargetCgroup::Mount> TargetCgroup::PerfHierarchy(absl::string_view mountinfo) {
  std::optional<Mount> v2;
  for (absl::string_view line : absl::StrSplit(mountinfo, '\n', absl::SkipEmpty())) {
    const std::vector<absl::string_view> halves = absl::StrSplit(line, " - ");
    if (halves.size() != 2) continue;
    const std::vector<absl::string_view> left = absl::StrSplit(halves[0], ' ', absl::SkipEmpty());
    const std::vector<absl::string_view> right = absl::StrSplit(halves[1], ' ', absl::SkipEmpty());
    if (left.size() < 5 || right.size() < 3) continue;
    if (right[0] == "cgroup") {
      for (absl::string_view opt : absl::StrSplit(right[2], ',')) {
        if (opt == "perf_event") return Mount{std::string(left[4]), true};
      }
    } else if (right[0] == "cgroup2" && !v2) {
      v2 = Mount{std::string(left[4]), false};
    }
  }
  return v2;
}

std::optional<std::string> TargetCgroup::PathIn(absl::string_view proc_cgroup, bool v1) {
  for (absl::string_view line : absl::StrSplit(proc_cgroup, '\n', absl::SkipEmpty())) {
    const std::vector<absl::string_view> f = absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (f.size() != 3) continue;
    bool match = !v1 && f[0] == "0" && f[1].empty();
    if (v1) {
      for (absl::string_view c : absl::StrSplit(f[1], ',')) match = match || c == "perf_event";
    }
    if (match) return std::string(f[2]);
  }
  return std::nullopt;
}

int TargetCgroup::MembersWith(absl::string_view procs, uint32_t pid) {
  int members = 0;
  bool found = false;
  for (absl::string_view line : absl::StrSplit(procs, '\n', absl::SkipEmpty())) {
    uint32_t p = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &p)) return 0;
    found = found || p == pid;
    ++members;
  }
  return found ? members : 0;
}

std::optional<TargetCgroup::Choice> TargetCgroup::SmallCgroupOf(uint32_t pid, std::string* why_not) {
  const std::optional<Mount> mount = PerfHierarchy(ReadSmallFile("/proc/self/mountinfo"));
  if (!mount) {
    *why_not = "no cgroup hierarchy perf can use is mounted";
    return std::nullopt;
  }
  const std::optional<std::string> path = PathIn(ReadSmallFile(absl::StrCat("/proc/", pid, "/cgroup")), mount->v1);
  if (!path || path->empty() || *path == "/") {
    *why_not = absl::StrCat("pid ", pid, " is in the root cgroup, with every other process");
    return std::nullopt;
  }
  const int members = MembersWith(ReadSmallFile(absl::StrCat(mount->path, *path, "/cgroup.procs")), pid);
  if (members == 0) {
    *why_not = absl::StrCat("cannot read the processes of its cgroup ", *path);
    return std::nullopt;
  }
  if (members > kMaxMembers) {
    *why_not = absl::StrCat("its cgroup ", *path, " holds ", members, " processes (more than ", kMaxMembers,
                            " would all be recorded)");
    return std::nullopt;
  }
  return Choice{std::string(absl::StripPrefix(*path, "/")), members};
}

}  // namespace pageblame::recorder

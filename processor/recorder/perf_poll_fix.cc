#include "processor/recorder/perf_poll_fix.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "processor/recorder/recorded_processes.h"

namespace pageblame::recorder {
namespace {

// Only root or this user may have written `st`'s file or directory.
bool OnlyOursCanWrite(const struct stat& st) {
  return (st.st_uid == 0 || st.st_uid == ::geteuid()) && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

}  // namespace

absl::Status PerfPollFix::Check(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat(path, ": ", std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) return absl::PermissionDeniedError(absl::StrCat(path, ": not a regular file"));
  if (!OnlyOursCanWrite(st)) {
    return absl::PermissionDeniedError(
        absl::StrCat(path, ": others may write it (owner uid ", st.st_uid, ", mode ", absl::Hex(st.st_mode & 07777),
                     "): not loaded into perf, which runs as root"));
  }
  const std::string dir = path.substr(0, path.rfind('/') + 1);
  if (::stat(dir.empty() ? "." : dir.c_str(), &st) != 0 || !OnlyOursCanWrite(st)) {
    return absl::PermissionDeniedError(
        absl::StrCat(dir, ": others may write this directory: ", kFileName, " is not loaded into perf"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> PerfPollFix::Locate() {
  char exe[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return absl::NotFoundError("cannot read /proc/self/exe");
  const std::string self(exe, static_cast<size_t>(n));
  const std::string lib = absl::StrCat(self.substr(0, self.rfind('/')), "/../lib/", kFileName);
  // The canonical path: it is what /proc/PID/maps of perf will show.
  char real[PATH_MAX];
  if (::realpath(lib.c_str(), real) == nullptr) return absl::NotFoundError(absl::StrCat(lib, ": ", std::strerror(errno)));
  const std::string path(real);
  if (absl::Status s = Check(path); !s.ok()) return s;
  return path;
}

bool PerfPollFix::Maps(absl::string_view proc_maps, const std::string& path) {
  for (absl::string_view line : absl::StrSplit(proc_maps, '\n')) {
    const size_t at = line.find('/');
    if (at != absl::string_view::npos && line.substr(at) == path) return true;
  }
  return false;
}

bool PerfPollFix::LoadedIn(pid_t pid, const std::string& path) {
  return Maps(ReadSmallFile(absl::StrCat("/proc/", pid, "/maps")), path);
}

}  // namespace pageblame::recorder

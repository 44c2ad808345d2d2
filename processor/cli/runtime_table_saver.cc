#include "processor/cli/runtime_table_saver.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "processor/analysis/syscall_format.h"
#include "processor/cli/child_process.h"
#include "processor/regions/runtime_table_store.h"

namespace pageblame::cli {
namespace {

std::string SelfExe() {
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  return n > 0 ? std::string(exe, n) : "pageblame";
}

uint64_t NowNs(clockid_t clock) {
  timespec t = {};
  ::clock_gettime(clock, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000 + static_cast<uint64_t>(t.tv_nsec);
}

}  // namespace

bool RuntimeTableSaver::IsDotnet(uint32_t pid) {
  std::ifstream f(absl::StrCat("/proc/", pid, "/maps"));
  std::string line;
  while (std::getline(f, line)) {
    if (absl::EndsWith(line, "/libcoreclr.so")) return true;
  }
  return false;
}

void RuntimeTableSaver::OnSnapshot(const std::vector<uint32_t>& pids, residency::SnapshotReason reason) {
  if (!set_aside_) {
    set_aside_ = true;
    if (absl::Status s = regions::RuntimeTableStore::SetAside(trace_, trace_moves_); !s.ok()) {
      Warn(std::string(s.message()));
    }
  }
  if (reason != residency::SnapshotReason::kStop && reason != residency::SnapshotReason::kRequested) return;
  for (uint32_t pid : pids) {
    if (IsDotnet(pid)) Save(pid);
  }
}

void RuntimeTableSaver::Warn(const std::string& message) {
  if (warned_.insert(message).second) std::fprintf(stderr, "pageblame record: warning: %s\n", message.c_str());
}

void RuntimeTableSaver::Save(uint32_t pid) {
  const std::string dir = regions::RuntimeTableStore::DirFor(trace_);
  // Stamped when the reading starts: the table says what the runtime owned
  // then (the process is stopped while ClrMD reads).
  // In whole microseconds, as times are printed and typed (--at).
  const uint64_t now = NowNs(clock_) / 1000 * 1000;
  const std::string path = regions::RuntimeTableStore::PathFor(trace_, pid, now);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    Warn(absl::StrCat("cannot make ", dir, ": ", std::strerror(errno), "; no .NET runtime tables saved"));
    return;
  }
  absl::StatusOr<ChildProcess::Result> r =
      ChildProcess::Run({SelfExe(), "dotnet-regions", "-p", absl::StrCat(pid), "-o", path});
  if (!r.ok() || r->exit_code != 0) {
    const std::string why = r.ok() ? std::string(absl::StripTrailingAsciiWhitespace(r->err))
                                   : std::string(r.status().message());
    Warn(absl::StrCat("no .NET runtime table of pid ", pid, " (", why,
                      "); attribute --unaccounted will need one: --maddress FILE"));
    ::unlink(path.c_str());
    return;
  }
  ++saved_;
  // The moment to ask about: --at it takes this table, and the residency
  // snapshot taken just before.
  std::fprintf(stderr, "pageblame record: the .NET runtime's table of pid %u at %s saved in %s\n", pid,
               analysis::FormatTime(now).c_str(), path.c_str());
}

}  // namespace pageblame::cli

#include "processor/cli/runtime_table_saver.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "processor/base/format.h"
#include "processor/cli/child_process.h"
#include "processor/regions/runtime_table_store.h"

namespace pageblame::cli {
namespace {

std::string SelfExe() {
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  return n > 0 ? std::string(exe, n) : "pageblame";
}

// CPU seconds of the children waited for so far.
double ChildrenCpuSeconds() {
  rusage u = {};
  ::getrusage(RUSAGE_CHILDREN, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
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
  if (files_ == nullptr) return;
  if (reason != residency::SnapshotReason::kStop && reason != residency::SnapshotReason::kRequested) return;
  for (uint32_t pid : pids) {
    if (IsDotnet(pid)) Save(pid);
  }
}

void RuntimeTableSaver::Warn(const std::string& message) {
  if (warned_.insert(message).second) std::fprintf(stderr, "pageblame record: warning: %s\n", message.c_str());
}

void RuntimeTableSaver::Save(uint32_t pid) {
  // Stamped when the reading starts: the table says what the runtime owned
  // then (the process is stopped while ClrMD reads).
  // In whole microseconds, as times are printed and typed (--at).
  const uint64_t now = NowNs(clock_) / 1000 * 1000;
  const std::string name = regions::RuntimeTableStore::NameFor(pid, now);
  const double cpu_before = ChildrenCpuSeconds();
  absl::StatusOr<ChildProcess::Result> r = ChildProcess::Run({SelfExe(), "dotnet-regions", "-p", absl::StrCat(pid)});
  helper_cpu_seconds_ += ChildrenCpuSeconds() - cpu_before;
  absl::Status saved = !r.ok() ? r.status()
                       : r->exit_code != 0
                           ? absl::UnavailableError(absl::StripTrailingAsciiWhitespace(r->err))
                           : files_->WriteRuntimeTable(name, r->out);
  if (!saved.ok()) {
    Warn(absl::StrCat("no .NET runtime table of pid ", pid, " (", saved.message(),
                      "); attribute --unaccounted will need one: --maddress FILE"));
    return;
  }
  const std::string path = files_->RuntimeTablePath(name);
  ++saved_;
  // The moment to ask about: --at it takes this table, and the residency
  // snapshot taken just before.
  std::fprintf(stderr, "pageblame record: the .NET runtime's table of pid %u at %s saved in %s\n", pid,
               FormatTime(now).c_str(), path.c_str());
}

}  // namespace pageblame::cli

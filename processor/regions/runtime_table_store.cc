#include "processor/regions/runtime_table_store.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace pageblame::regions {
namespace {

bool IsDir(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d)) out.emplace_back(e->d_name);
  ::closedir(d);
  return out;
}

absl::Status Error(const char* what, const std::string& path) {
  return absl::UnavailableError(absl::StrCat("cannot ", what, " ", path, ": ", std::strerror(errno)));
}

// Removes the tables of an older TRACE.old.runtime, then the directory if
// nothing else is in it (anything else there is the user's: kept).
absl::Status RemoveTables(const std::string& dir) {
  for (const std::string& name : Names(dir)) {
    if (!RuntimeTableStore::ParseName(name)) continue;
    const std::string path = absl::StrCat(dir, "/", name);
    if (::unlink(path.c_str()) != 0) return Error("remove", path);
  }
  if (::rmdir(dir.c_str()) != 0 && errno != ENOTEMPTY && errno != EEXIST) return Error("remove", dir);
  return absl::OkStatus();
}

}  // namespace

std::string RuntimeTableStore::DirFor(const std::string& trace) { return trace + ".runtime"; }

std::string RuntimeTableStore::PathFor(const std::string& trace, uint32_t pid, uint64_t time) {
  return absl::StrCat(DirFor(trace), "/", pid, "-", time, ".txt");
}

std::optional<RuntimeTableStore::Entry> RuntimeTableStore::ParseName(absl::string_view name) {
  if (!absl::ConsumeSuffix(&name, ".txt")) return std::nullopt;
  const size_t dash = name.find('-');
  if (dash == absl::string_view::npos) return std::nullopt;
  Entry e;
  if (!absl::SimpleAtoi(name.substr(0, dash), &e.pid) || e.pid == 0 ||
      !absl::SimpleAtoi(name.substr(dash + 1), &e.time)) {
    return std::nullopt;
  }
  return e;
}

std::vector<RuntimeTableStore::Entry> RuntimeTableStore::List(const std::string& trace) {
  std::vector<Entry> out;
  const std::string dir = DirFor(trace);
  for (const std::string& name : Names(dir)) {
    if (std::optional<Entry> e = ParseName(name)) {
      e->path = absl::StrCat(dir, "/", name);
      out.push_back(*std::move(e));
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Entry& a, const Entry& b) { return a.pid != b.pid ? a.pid < b.pid : a.time < b.time; });
  return out;
}

std::optional<RuntimeTableStore::Entry> RuntimeTableStore::Latest(const std::vector<Entry>& entries, uint32_t pid,
                                                                  uint64_t at) {
  std::optional<Entry> best;
  for (const Entry& e : entries) {
    if (e.pid == pid && e.time <= at && (!best || e.time >= best->time)) best = e;
  }
  return best;
}

absl::Status RuntimeTableStore::SetAside(const std::string& trace, bool trace_moves) {
  if (!trace_moves) return absl::OkStatus();
  const std::string current = DirFor(trace), old = DirFor(trace + ".old");
  if (IsDir(old)) {
    if (absl::Status s = RemoveTables(old); !s.ok()) return s;
  }
  if (IsDir(current) && !IsDir(old) && std::rename(current.c_str(), old.c_str()) != 0) {
    return Error("rename", current);
  }
  return absl::OkStatus();
}

}  // namespace pageblame::regions

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

std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d)) out.emplace_back(e->d_name);
  ::closedir(d);
  return out;
}

}  // namespace

std::string RuntimeTableStore::DirFor(const std::string& trace) { return trace + ".runtime"; }

std::string RuntimeTableStore::NameFor(uint32_t pid, uint64_t time) { return absl::StrCat(pid, "-", time, ".txt"); }

std::string RuntimeTableStore::PathFor(const std::string& trace, uint32_t pid, uint64_t time) {
  return absl::StrCat(DirFor(trace), "/", NameFor(pid, time));
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

}  // namespace pageblame::regions

#include "processor/recorder/recorded_processes.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace pageblame::recorder {

std::string ReadSmallFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

namespace {

struct FileId {
  dev_t dev;
  ino_t ino;
  bool operator==(const FileId& o) const { return dev == o.dev && ino == o.ino; }
};

std::optional<FileId> ExecutableOf(uint32_t pid) {
  struct stat st;
  if (::stat(absl::StrCat("/proc/", pid, "/exe").c_str(), &st) != 0) return std::nullopt;
  return FileId{st.st_dev, st.st_ino};
}

}  // namespace

std::optional<ProcessRow> ParseStat(absl::string_view text) {
  // "pid (comm) state ppid pgrp ... starttime ...": comm is whatever the
  // process named itself, so the fields start after its last ')'.
  const size_t open = text.find(" (");
  const size_t close = text.rfind(')');
  if (open == absl::string_view::npos || close == absl::string_view::npos || close < open) return std::nullopt;
  ProcessRow row;
  if (!absl::SimpleAtoi(text.substr(0, open), &row.pid)) return std::nullopt;
  std::vector<absl::string_view> f = absl::StrSplit(text.substr(close + 1), ' ', absl::SkipEmpty());
  // f[0] is field 3 (state), so field N is f[N - 3].
  if (f.size() < 20 || !absl::SimpleAtoi(f[1], &row.ppid) || !absl::SimpleAtoi(f[19], &row.start)) {
    return std::nullopt;
  }
  row.state = f[0].front();
  return row;
}

std::vector<ProcessRow> ReadProcessTable(std::optional<pid_t> perf) {
  std::vector<ProcessRow> rows;
  const std::optional<FileId> perf_exe = perf ? ExecutableOf(*perf) : std::nullopt;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return rows;
  while (const dirent* e = ::readdir(dir)) {
    uint32_t pid;
    if (!absl::SimpleAtoi(e->d_name, &pid)) continue;
    std::optional<ProcessRow> row = ParseStat(ReadSmallFile(absl::StrCat("/proc/", pid, "/stat")));
    if (!row) continue;  // gone meanwhile
    if (perf_exe && perf && row->ppid == static_cast<uint32_t>(*perf)) row->runs_perf = ExecutableOf(pid) == perf_exe;
    rows.push_back(*row);
  }
  ::closedir(dir);
  return rows;
}

bool RunsExecutableOf(uint32_t pid, pid_t other) {
  const std::optional<FileId> a = ExecutableOf(pid);
  return a && a == ExecutableOf(static_cast<uint32_t>(other));
}

std::vector<uint32_t> ChildrenOf(uint32_t pid) {
  std::vector<uint32_t> out;
  std::ifstream f(absl::StrCat("/proc/", pid, "/task/", pid, "/children"));
  if (f) {
    for (uint32_t child; f >> child;) out.push_back(child);
    return out;
  }
  for (const ProcessRow& row : ReadProcessTable(std::nullopt)) {
    if (row.ppid == pid) out.push_back(row.pid);
  }
  return out;
}

std::vector<uint32_t> RecordedProcesses::Update(const std::vector<ProcessRow>& table) {
  absl::flat_hash_map<uint32_t, const ProcessRow*> live;
  for (const ProcessRow& row : table) live[row.pid] = &row;
  // Forget the processes that are gone (or whose pid now names another).
  for (auto it = followed_.begin(); it != followed_.end();) {
    auto now = live.find(it->first);
    if (now == live.end() || now->second->start != it->second) {
      followed_.erase(it++);
    } else {
      ++it;
    }
  }
  auto follow = [&](const ProcessRow& row) { followed_.emplace(row.pid, row.start); };
  for (const ProcessRow& row : table) {
    if (root_ && row.pid == *root_) follow(row);
    if (perf_ && row.ppid == static_cast<uint32_t>(*perf_) && !row.runs_perf) follow(row);
  }
  // Descendants: a pass per generation, until no new process is found.
  for (bool grew = true; grew;) {
    grew = false;
    for (const ProcessRow& row : table) {
      if (!followed_.contains(row.pid) && followed_.contains(row.ppid)) {
        follow(row);
        grew = true;
      }
    }
  }
  std::vector<uint32_t> pids;
  for (const auto& [pid, start] : followed_) pids.push_back(pid);
  std::sort(pids.begin(), pids.end());
  return pids;
}

}  // namespace pageblame::recorder

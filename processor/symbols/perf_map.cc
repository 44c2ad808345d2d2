#include "processor/symbols/perf_map.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "processor/base/input_file.h"
#include "processor/base/side_file_trust.h"
#include "processor/symbols/directory_of.h"
#include "absl/strings/strip.h"
#include "processor/symbols/absl_compat.h"

namespace pageblame::symbols {
namespace {

// The next whitespace-delimited word of `line`, consumed from it.
absl::string_view NextWord(absl::string_view* line) {
  *line = absl::StripLeadingAsciiWhitespace(*line);
  size_t end = 0;
  while (end < line->size() && !absl::ascii_isspace(static_cast<unsigned char>((*line)[end]))) {
    ++end;
  }
  absl::string_view word = line->substr(0, end);
  line->remove_prefix(end);
  return word;
}

}  // namespace

absl::StatusOr<PerfMap> PerfMap::Load(const std::string& path, bool force) {
  // A regular file only: a directory, FIFO or device under that name is a
  // mistake or a trap, never a map. And from /tmp, only a file no other
  // user could have written: the names it gives decide who is blamed.
  absl::StatusOr<std::unique_ptr<InputFile>> file = OpenSideFile(path, "perf map", force);
  if (!file.ok()) return file.status();
  absl::StatusOr<std::string> text = (*file)->ReadAll();
  if (!text.ok()) return text.status();
  return Parse(*text);
}

PerfMap PerfMap::Parse(std::string_view text) {
  PerfMap map;
  for (absl::string_view line : absl::StrSplit(ToAbsl(text), '\n')) {
    line = absl::StripSuffix(line, "\r");
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    uint64_t start = 0, size = 0;
    absl::string_view start_word = NextWord(&line);
    absl::string_view size_word = NextWord(&line);
    absl::string_view name = absl::StripAsciiWhitespace(line);
    if (!absl::SimpleHexAtoi(start_word, &start) || !absl::SimpleHexAtoi(size_word, &size) ||
        name.empty() || start + size < start) {
      ++map.bad_lines_;
      continue;
    }
    // A zero-size blob still names the byte at its start.
    map.Add({start, start + (size == 0 ? 1 : size), std::string(name)});
  }
  return map;
}

void PerfMap::Add(Entry entry) {
  const uint64_t start = entry.start, end = entry.end;
  const uint32_t index = static_cast<uint32_t>(entries_.size());
  entries_.push_back(std::move(entry));
  // Cut [start, end) out of the pieces already there, then insert it whole.
  auto it = pieces_.lower_bound(start);
  if (it != pieces_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.end > start) {
      Piece tail = prev->second;
      prev->second.end = start;
      if (tail.end > end) pieces_[end] = tail;
    }
  }
  it = pieces_.lower_bound(start);
  while (it != pieces_.end() && it->first < end) {
    if (it->second.end > end) {
      Piece tail = it->second;
      it = pieces_.erase(it);
      pieces_.emplace(end, tail);
      break;
    }
    it = pieces_.erase(it);
  }
  pieces_[start] = Piece{end, index};
}

const PerfMap::Entry* PerfMap::Find(uint64_t addr) const {
  auto it = pieces_.upper_bound(addr);
  if (it == pieces_.begin()) return nullptr;
  --it;
  if (addr >= it->second.end) return nullptr;
  return &entries_[it->second.entry];
}

std::vector<std::string> PerfMap::CandidatePaths(uint32_t pid, std::string_view trace_path,
                                                 std::string_view tmp_dir, std::string_view perf_map_dir) {
  return CandidatePathsOf(absl::StrCat("perf-", pid, ".map"), trace_path, tmp_dir, perf_map_dir);
}

std::vector<std::string> PerfMap::CandidatePathsOf(std::string_view file, std::string_view trace_path,
                                                   std::string_view tmp_dir, std::string_view perf_map_dir) {
  std::vector<std::string> paths;
  // A trace kept in /tmp has /tmp as its directory: one look, one warning.
  auto add = [&](std::string_view dir) {
    if (dir.empty()) return;
    std::string path = absl::StrCat(absl::StripSuffix(ToAbsl(dir), "/"), "/", ToAbsl(file));
    if (std::find(paths.begin(), paths.end(), path) == paths.end()) paths.push_back(std::move(path));
  };
  if (!trace_path.empty() && trace_path != "-") add(absl::StrCat(ToAbsl(trace_path), ".runtime"));
  if (!trace_path.empty()) add(DirectoryOf(trace_path));
  add(tmp_dir);
  add(perf_map_dir);
  return paths;
}

std::string PerfMap::DsoName(uint32_t pid) { return absl::StrCat("/tmp/perf-", pid, ".map"); }

}  // namespace pageblame::symbols

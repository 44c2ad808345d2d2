#include "processor/residency/pagemap_sampler.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace pageblame::residency {
namespace {

constexpr uint64_t kPresentBit = uint64_t{1} << 63;
constexpr uint64_t kSwappedBit = uint64_t{1} << 62;
constexpr uint64_t kUserTop = uint64_t{1} << 56;  // above x86-64's 5-level user space too
constexpr size_t kEntriesPerRead = 64 * 1024;

absl::StatusOr<std::string> ReadProcText(const std::string& path) {
  std::ifstream f(path);
  if (!f) {
    return errno == ENOENT || errno == ESRCH ? absl::NotFoundError(absl::StrCat(path, ": no such process"))
                                             : absl::PermissionDeniedError(absl::StrCat(path, ": ", std::strerror(errno)));
  }
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// "Rss:  1234 kB" -> bytes, from smaps_rollup.
std::optional<uint64_t> RollupField(absl::string_view text, absl::string_view field) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::ConsumePrefix(&line, field) || !absl::ConsumePrefix(&line, ":")) continue;
    line = absl::StripAsciiWhitespace(line);
    if (!absl::ConsumeSuffix(&line, "kB")) return std::nullopt;
    uint64_t kb;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &kb)) return std::nullopt;
    return kb * 1024;
  }
  return std::nullopt;
}

// The parts of sorted disjoint `a` inside sorted disjoint `b`.
std::vector<PageRange> Intersect(const std::vector<PageRange>& a, const std::vector<PageRange>& b) {
  std::vector<PageRange> out;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    const uint64_t start = std::max(a[i].start, b[j].start), end = std::min(a[i].end, b[j].end);
    if (start < end) AppendRange(&out, start, end);
    a[i].end < b[j].end ? ++i : ++j;
  }
  return out;
}

}  // namespace

std::vector<PageRange> AccessibleRanges(absl::string_view maps_text) {
  std::vector<PageRange> out;
  for (absl::string_view line : absl::StrSplit(maps_text, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> f = absl::StrSplit(line, absl::MaxSplits(' ', 2));
    if (f.size() < 2 || f[1].size() < 3) continue;
    std::pair<absl::string_view, absl::string_view> bounds = absl::StrSplit(f[0], '-');
    uint64_t start, end;
    if (!absl::SimpleHexAtoi(bounds.first, &start) || !absl::SimpleHexAtoi(bounds.second, &end)) continue;
    if (end <= start || end > kUserTop || (start | end) % 4096 != 0) continue;
    if (f[1].substr(0, 3) == "---") continue;
    AppendRange(&out, start, end);
  }
  return out;
}

uint64_t PagemapSampler::Now() const {
  timespec ts;
  clock_gettime(clockid_, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

absl::StatusOr<ResidencySnapshot> PagemapSampler::Take(uint32_t pid, SnapshotReason reason) {
  return Read(pid, reason, nullptr);
}

absl::StatusOr<ResidencySnapshot> PagemapSampler::TakeWithin(uint32_t pid, SnapshotReason reason,
                                                             const std::vector<PageRange>& within) {
  return Read(pid, reason, &within);
}

absl::StatusOr<ResidencySnapshot> PagemapSampler::Read(uint32_t pid, SnapshotReason reason,
                                                       const std::vector<PageRange>* within) {
  ResidencySnapshot s;
  s.pid = pid;
  s.reason = reason;
  s.time = Now();
  const std::string proc = absl::StrCat("/proc/", pid);
  absl::StatusOr<std::string> maps = ReadProcText(proc + "/maps");
  if (!maps.ok()) return maps.status();
  const int fd = ::open((proc + "/pagemap").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    // ESRCH: a zombie (exited, not reaped) has maps but no memory left to read.
    if (errno == ENOENT || errno == ESRCH) return absl::NotFoundError(absl::StrCat(proc, ": no such process"));
    return absl::PermissionDeniedError(absl::StrCat(proc, "/pagemap: ", std::strerror(errno)));
  }
  std::vector<PageRange> read, present, swapped;
  buffer_.resize(kEntriesPerRead);
  const uint64_t page = 4096;
  const std::vector<PageRange> accessible = AccessibleRanges(*maps);
  for (const PageRange& range : within ? Intersect(accessible, *within) : accessible) {
    for (uint64_t at = range.start; at < range.end;) {
      const size_t want = std::min<uint64_t>(kEntriesPerRead, (range.end - at) / page);
      const ssize_t got = ::pread(fd, buffer_.data(), want * 8, static_cast<off_t>(at / page * 8));
      if (got <= 0) break;  // the mapping went away while we read: keep what was read
      const size_t n = static_cast<size_t>(got) / 8;
      for (size_t i = 0; i < n; ++i) {
        const uint64_t addr = at + i * page;
        if (buffer_[i] & kPresentBit) AppendRange(&present, addr, addr + page);
        else if (buffer_[i] & kSwappedBit) AppendRange(&swapped, addr, addr + page);
      }
      AppendRange(&read, at, at + n * page);
      at += n * page;
    }
  }
  ::close(fd);
  absl::StatusOr<std::string> rollup = within ? absl::NotFoundError("not read") : ReadProcText(proc + "/smaps_rollup");
  if (rollup.ok()) {
    s.rollup_rss = RollupField(*rollup, "Rss");
    s.rollup_swap = RollupField(*rollup, "Swap");
  }
  s.end_time = Now();
  s.read = RangeTally(std::move(read));
  s.present = RangeTally(std::move(present));
  s.swapped = RangeTally(std::move(swapped));
  return s;
}

}  // namespace pageblame::residency

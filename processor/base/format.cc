#include "processor/base/format.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace pageblame {

std::string FormatTime(uint64_t ns) {
  if (ns == kEndOfTime) return "end";
  return absl::StrFormat("%d.%06d", ns / 1000000000, (ns / 1000) % 1000000);
}

double TimeSeconds(uint64_t ns) {
  double v = 0;
  (void)absl::SimpleAtod(FormatTime(ns), &v);
  return v;
}

absl::StatusOr<uint64_t> ParseTime(const std::string& text) {
  if (text == "end") return kEndOfTime;
  std::vector<std::string> parts = absl::StrSplit(text, '.');
  uint64_t secs = 0, frac = 0;
  bool ok = parts.size() <= 2 && !parts[0].empty() && absl::SimpleAtoi(parts[0], &secs);
  size_t digits = parts.size() == 2 ? parts[1].size() : 0;
  if (ok && parts.size() == 2) {
    ok = digits >= 1 && digits <= 9 && absl::SimpleAtoi(parts[1], &frac) &&
         parts[1].find_first_not_of("0123456789") == std::string::npos;
  }
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad time '", text, "': expected seconds as perf script prints them (e.g. 216.083882) or 'end'"));
  }
  uint64_t scale = 1;
  for (size_t i = digits; i < 9; ++i) scale *= 10;
  // The last ns of the printed instant: an event printed as T is included.
  return secs * 1000000000 + frac * scale + (scale - 1);
}

std::string Hex(uint64_t v) { return absl::StrCat("0x", absl::Hex(v)); }

std::string HumanBytes(uint64_t bytes) {
  // Up to EiB: a region table may list the whole 64-bit space (2^64 - 1 bytes).
  if (bytes >= (uint64_t{1} << 60)) return absl::StrFormat("%.1f EiB", bytes / double(uint64_t{1} << 60));
  if (bytes >= (uint64_t{1} << 50)) return absl::StrFormat("%.1f PiB", bytes / double(uint64_t{1} << 50));
  if (bytes >= (uint64_t{1} << 40)) return absl::StrFormat("%.1f TiB", bytes / double(uint64_t{1} << 40));
  if (bytes >= (uint64_t{1} << 30)) return absl::StrFormat("%.1f GiB", bytes / double(1 << 30));
  if (bytes >= (uint64_t{1} << 20)) return absl::StrFormat("%.1f MiB", bytes / double(1 << 20));
  if (bytes >= 1024) return absl::StrFormat("%.1f KiB", bytes / 1024.0);
  return absl::StrCat(bytes, " B");
}

}  // namespace pageblame

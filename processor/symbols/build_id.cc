#include "processor/symbols/build_id.h"

#include <algorithm>

namespace pageblame::symbols {
namespace {

// SHA-1 build ids (ld --build-id default) are 20 bytes; perf's BUILD_ID_SIZE.
constexpr size_t kSha1BuildIdSize = 20;

bool AllZero(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == '\0'; });
}

}  // namespace

std::string NormalizeBuildId(std::string_view raw) {
  if (raw.size() > kSha1BuildIdSize && AllZero(raw.substr(kSha1BuildIdSize))) {
    raw = raw.substr(0, kSha1BuildIdSize);
  }
  return std::string(raw);
}

std::string BuildIdToHex(std::string_view raw) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string normalized = NormalizeBuildId(raw);
  std::string hex;
  hex.reserve(normalized.size() * 2);
  for (unsigned char c : normalized) {
    hex.push_back(kDigits[c >> 4]);
    hex.push_back(kDigits[c & 0xf]);
  }
  return hex;
}

bool BuildIdMatches(std::string_view wanted, std::string_view actual) {
  if (wanted.empty() || actual.empty()) return false;
  if (NormalizeBuildId(wanted) == NormalizeBuildId(actual)) return true;
  return wanted.size() > actual.size() && wanted.substr(0, actual.size()) == actual &&
         AllZero(wanted.substr(actual.size()));
}

}  // namespace pageblame::symbols

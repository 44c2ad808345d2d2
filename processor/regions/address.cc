#include "processor/regions/address.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace pageblame::regions {
namespace {

// Accumulates hex digits of `s` into *value; false on a non-hex character or
// overflow past 64 bits. `*significant` counts digits after leading zeros.
bool AccumulateHex(absl::string_view s, uint64_t* value, int* significant) {
  for (char c : s) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
    int digit = absl::ascii_isdigit(static_cast<unsigned char>(c))
                    ? c - '0'
                    : absl::ascii_tolower(static_cast<unsigned char>(c)) - 'a' + 10;
    if (*significant > 0 || digit != 0) ++*significant;
    if (*significant > 16) return false;
    *value = (*value << 4) | static_cast<uint64_t>(digit);
  }
  return true;
}

}  // namespace

absl::StatusOr<uint64_t> ParseAddress(absl::string_view text) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad address '", text, "': ", why,
                     " (expected 0x..., bare hex or WinDbg hi`lo8)"));
  };
  absl::string_view s = text;
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.empty()) return bad("no digits");
  absl::string_view high, low = s;
  size_t tick = s.find('`');
  if (tick != absl::string_view::npos) {
    high = s.substr(0, tick);
    low = s.substr(tick + 1);
    if (high.empty()) return bad("nothing before the backtick");
    if (low.size() != 8) return bad("WinDbg form needs exactly 8 digits after the backtick");
  }
  uint64_t value = 0;
  int significant = 0;
  if (!AccumulateHex(high, &value, &significant) || !AccumulateHex(low, &value, &significant)) {
    return significant > 16 ? bad("more than 64 bits") : bad("not hexadecimal");
  }
  return value;
}

bool IsAddress(absl::string_view text) { return ParseAddress(text).ok(); }

std::string FormatAddress(uint64_t address) { return absl::StrFormat("0x%x", address); }

}  // namespace pageblame::regions

#include "processor/regions/range_list_parser.h"

#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "processor/regions/address.h"

namespace pageblame::regions {
namespace {

constexpr absl::string_view kExpected =
    "expected an address (0x..., hex or WinDbg hi`lo) or a range 'START-END', 'START,END' or "
    "'START END'";

bool IsSeparator(char c) { return c == '-' || c == ',' || c == ' ' || c == '\t'; }

absl::string_view StripComment(absl::string_view line) {
  size_t hash = line.find('#');
  return absl::StripAsciiWhitespace(hash == absl::string_view::npos ? line : line.substr(0, hash));
}

}  // namespace

absl::StatusOr<std::pair<uint64_t, uint64_t>> RangeListParser::ParseEntry(absl::string_view line) {
  absl::string_view t = StripComment(line);
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(kExpected, ", got '", t, "'", why));
  };
  size_t a_len = 0;
  while (a_len < t.size() && !IsSeparator(t[a_len])) ++a_len;
  absl::string_view a_text = t.substr(0, a_len);
  absl::string_view rest = absl::StripLeadingAsciiWhitespace(t.substr(a_len));
  if (a_text.empty()) return bad("");
  absl::StatusOr<uint64_t> a = ParseAddress(a_text);
  if (!a.ok()) return bad(absl::StrCat(": ", a.status().message()));
  if (rest.empty()) {
    uint64_t page = *a & ~(kPageSize - 1);
    if (page > ~uint64_t{0} - kPageSize) return bad(": the page runs past 2^64");
    return std::make_pair(page, page + kPageSize);
  }
  if (rest[0] == '-' || rest[0] == ',') rest = absl::StripLeadingAsciiWhitespace(rest.substr(1));
  for (char c : rest)
    if (IsSeparator(c)) return bad(": more than two addresses");
  if (rest.empty()) return bad(": the range has no END");
  absl::StatusOr<uint64_t> b = ParseAddress(rest);
  if (!b.ok()) return bad(absl::StrCat(": ", b.status().message()));
  if (*b <= *a) return bad(": END must be above START (END is exclusive)");
  return std::make_pair(*a, *b);
}

bool RangeListParser::LooksLikeEntry(absl::string_view line) {
  return !StripComment(line).empty() && ParseEntry(line).ok();
}

absl::StatusOr<RegionTable> RangeListParser::Parse(const TextLines& text) {
  RegionTable table;
  table.format = std::string(kFormat);
  for (int n = 1; n <= text.size(); ++n) {
    if (StripComment(text.line(n)).empty()) continue;
    absl::StatusOr<std::pair<uint64_t, uint64_t>> e = ParseEntry(text.line(n));
    if (!e.ok()) return text.Error(n, e.status().message());
    Region r;
    r.start = e->first;
    r.end = e->second;
    r.line = n;
    table.regions.push_back(std::move(r));
  }
  if (table.regions.empty()) return text.FileError(absl::StrCat("no addresses (", kExpected, ")"));
  return table;
}

}  // namespace pageblame::regions

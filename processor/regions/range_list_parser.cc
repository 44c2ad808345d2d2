#include "processor/regions/range_list_parser.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "processor/base/status_macros.h"
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

// The syntax of one entry: one address, or two with a separator. Whether a
// range is well-ordered is checked by ParseEntry, not here, so a reversed
// range is still recognized as a list entry and its error names the line.
struct Entry {
  uint64_t a = 0;
  std::optional<uint64_t> b;
};

absl::StatusOr<Entry> Split(absl::string_view t) {
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
  Entry e;
  e.a = *a;
  if (rest.empty()) return e;
  if (rest[0] == '-' || rest[0] == ',') rest = absl::StripLeadingAsciiWhitespace(rest.substr(1));
  for (char c : rest)
    if (IsSeparator(c)) return bad(": more than two addresses");
  if (rest.empty()) return bad(": the range has no END");
  absl::StatusOr<uint64_t> b = ParseAddress(rest);
  if (!b.ok()) return bad(absl::StrCat(": ", b.status().message()));
  e.b = *b;
  return e;
}

}  // namespace

absl::StatusOr<std::pair<uint64_t, uint64_t>> RangeListParser::ParseEntry(absl::string_view line) {
  absl::string_view t = StripComment(line);
  ASSIGN_OR_RETURN(Entry e, Split(t));
  if (!e.b) {
    uint64_t page = e.a & ~(kPageSize - 1);
    if (page > ~uint64_t{0} - kPageSize)
      return absl::InvalidArgumentError(
          absl::StrCat("the page of '", t, "' runs past 2^64 (the last whole page ends below it)"));
    return std::make_pair(page, page + kPageSize);
  }
  if (*e.b <= e.a)
    return absl::InvalidArgumentError(
        absl::StrCat("END must be above START (END is exclusive), got '", t, "'"));
  return std::make_pair(e.a, *e.b);
}

bool RangeListParser::LooksLikeEntry(absl::string_view line) {
  absl::string_view t = StripComment(line);
  return !t.empty() && Split(t).ok();
}

bool RangeListParser::StartsLikeEntry(absl::string_view line) {
  absl::string_view t = StripComment(line);
  size_t a_len = 0;
  while (a_len < t.size() && !IsSeparator(t[a_len])) ++a_len;
  return a_len > 0 && IsAddress(t.substr(0, a_len));
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
    // A comment on the entry's line says what the range is (clr-regions:
    // "# GCHeap Generation2 committed"): kept as its usage.
    const absl::string_view line = text.line(n);
    if (const size_t hash = line.find('#'); hash != absl::string_view::npos) {
      r.usage = std::string(absl::StripAsciiWhitespace(line.substr(hash + 1)));
    }
    table.regions.push_back(std::move(r));
  }
  if (table.regions.empty()) return text.FileError(absl::StrCat("no addresses (", kExpected, ")"));
  return table;
}

}  // namespace pageblame::regions

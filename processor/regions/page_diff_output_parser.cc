#include "processor/regions/page_diff_output_parser.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "processor/regions/address.h"

namespace pageblame::regions {
namespace {

constexpr absl::string_view kExpected =
    "expected 'START - END Size: N[B|KB|MB|GB] Type: T State: S Protection: P Kind: K Usage: U'";

// Checks the seed's "103MB": the byte count divided by the unit, rounded down
// (10.7 MB prints as "10MB", 1.5 KB as "1KB" in the seed's own example).
absl::Status CheckSize(absl::string_view size, uint64_t bytes) {
  size_t unit_at = 0;
  while (unit_at < size.size() && absl::ascii_isdigit(static_cast<unsigned char>(size[unit_at])))
    ++unit_at;
  std::string unit = absl::AsciiStrToUpper(size.substr(unit_at));
  uint64_t multiplier = 0;
  if (unit == "B") multiplier = 1;
  else if (unit == "KB") multiplier = uint64_t{1} << 10;
  else if (unit == "MB") multiplier = uint64_t{1} << 20;
  else if (unit == "GB") multiplier = uint64_t{1} << 30;
  else if (unit == "TB") multiplier = uint64_t{1} << 40;
  uint64_t value = 0;
  if (multiplier == 0 || unit_at == 0 || !absl::SimpleAtoi(size.substr(0, unit_at), &value))
    return absl::InvalidArgumentError(absl::StrCat("bad Size '", size, "'"));
  if (bytes / multiplier != value)
    return absl::InvalidArgumentError(absl::StrFormat(
        "Size '%s' does not match END - START = %u bytes", size, bytes));
  return absl::OkStatus();
}

}  // namespace

bool PageDiffOutputParser::LooksLikeRow(absl::string_view line) {
  std::vector<absl::string_view> f = TextLines::Fields(line);
  return f.size() >= 4 && IsAddress(f[0]) && f[1] == "-" && IsAddress(f[2]) &&
         absl::StartsWith(f[3], "Size:");
}

bool PageDiffOutputParser::IsSummaryLine(absl::string_view line) {
  absl::string_view t = absl::StripAsciiWhitespace(line);
  return absl::StartsWith(t, "Memory regions found by ") || absl::StartsWith(t, "After distinct:") ||
         absl::StartsWith(t, "Total unaccounted size:");
}

absl::StatusOr<RegionTable> PageDiffOutputParser::Parse(const TextLines& text) {
  RegionTable table;
  table.format = std::string(kFormat);
  table.has_state = true;
  int section = 0;  // number of "... but not by ..." titles seen so far
  std::string second_title;
  for (int n = 1; n <= text.size(); ++n) {
    absl::string_view line = text.line(n);
    absl::string_view t = absl::StripAsciiWhitespace(line);
    if (t.empty()) continue;
    if (IsSummaryLine(t)) {
      if (absl::StrContains(t, " but not by ")) {
        ++section;
        if (section == 2) second_title = std::string(t.substr(0, t.find(':')));
      }
      continue;
    }
    std::vector<absl::string_view> f = TextLines::Fields(t);
    // A row is "START - END ..."; a lone address is a row cut short.
    if (!IsAddress(f[0]) || (f.size() >= 2 && f[1] != "-")) {
      table.Skip(n, absl::StrCat("not a region row: ", TextLines::Quote(line)));
      continue;
    }
    // Starts like a row: it must parse. Values sit between the keys.
    static constexpr absl::string_view kKeys[] = {" Size:", " Type:", " State:", " Protection:",
                                                 " Kind:", " Usage:"};
    absl::string_view values[6];
    size_t pos = 0, value_start[6];
    bool ok = f.size() >= 3 && f[1] == "-";
    for (int k = 0; ok && k < 6; ++k) {
      size_t at = t.find(kKeys[k], pos);
      ok = at != absl::string_view::npos;
      if (ok) {
        value_start[k] = at + kKeys[k].size();
        pos = value_start[k];
      }
    }
    if (!ok) return text.Error(n, absl::StrCat(kExpected, ", got ", TextLines::Quote(line)));
    for (int k = 0; k < 6; ++k) {
      size_t stop = k + 1 < 6 ? value_start[k + 1] - kKeys[k + 1].size() : t.size();
      values[k] = absl::StripAsciiWhitespace(t.substr(value_start[k], stop - value_start[k]));
    }
    absl::StatusOr<uint64_t> start = ParseAddress(f[0]);
    absl::StatusOr<uint64_t> end = ParseAddress(f[2]);
    if (!start.ok() || !end.ok())
      return text.Error(n, (start.ok() ? end : start).status().message());
    if (*end <= *start)
      return text.Error(n, absl::StrFormat("END 0x%x is not above START 0x%x", *end, *start));
    absl::Status size_ok = CheckSize(values[0], *end - *start);
    if (!size_ok.ok()) return text.Error(n, size_ok.message());
    if (section >= 2) {
      table.Skip(n, absl::StrCat("in the section '", second_title,
                                 "' (only the first, unaccounted, section is read)"));
      continue;
    }
    Region r;
    r.start = *start;
    r.end = *end;
    r.line = n;
    r.type = std::string(values[1]);
    r.state = std::string(values[2]);
    r.protect = std::string(values[3]);
    absl::string_view kind = values[4], usage = values[5];
    if (usage.empty()) r.usage = std::string(kind);
    else if (usage.front() == '[') r.usage = absl::StrCat(kind, " ", usage);
    else r.usage = absl::StrCat(kind, " [", usage, "]");
    table.regions.push_back(std::move(r));
  }
  if (table.regions.empty())
    return text.FileError(absl::StrCat("no page-diff result rows found (", kExpected, ")"));
  return table;
}

}  // namespace pageblame::regions

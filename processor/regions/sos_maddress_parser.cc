#include "processor/regions/sos_maddress_parser.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "processor/base/status_macros.h"
#include "processor/regions/address.h"

namespace pageblame::regions {
namespace {

bool IsBorder(absl::string_view t) {
  return t.size() >= 3 && t.front() == '+' && t.back() == '+' &&
         t.find_first_not_of("+-") == absl::string_view::npos;
}

// Cells of a "| a | b |" row, trimmed; empty if the row lacks its borders.
std::vector<absl::string_view> Cells(absl::string_view trimmed) {
  if (trimmed.size() < 2 || trimmed.front() != '|' || trimmed.back() != '|') return {};
  std::vector<absl::string_view> cells =
      absl::StrSplit(trimmed.substr(1, trimmed.size() - 2), '|');
  for (absl::string_view& c : cells) c = absl::StripAsciiWhitespace(c);
  return cells;
}

struct Columns {
  int kind = -1, start = -1, end = -1, size = -1, type = -1, state = -1, protect = -1,
      image = -1;
  size_t count = 0;
};

absl::string_view Cell(const std::vector<absl::string_view>& cells, int col) {
  return col < 0 ? absl::string_view() : cells[col];
}

// Where in the table a line is: each part has its own handler below.
enum class Where { kBefore, kAfterHeader, kRows, kAfter };

// What the lines read so far have set.
struct Reading {
  Where where = Where::kBefore;
  bool last_was_border = false;  // the last line not blank or '#' (kBefore only)
  int header_line = 0;
  Columns col;
};

// The columns the header row `cells` (line `n`) names; EndAddr-1 is required.
absl::StatusOr<Columns> HeaderColumns(const TextLines& text, int n,
                                      const std::vector<absl::string_view>& cells) {
  Columns col;
  col.count = cells.size();
  for (size_t i = 0; i < cells.size(); ++i) {
    absl::string_view c = cells[i];
    int* role = c == "Memory Kind"                   ? &col.kind
                : c == "StartAddr"                   ? &col.start
                : c == "EndAddr-1" || c == "EndAddr" ? &col.end
                : c == "Size"                        ? &col.size
                : c == "Type"                        ? &col.type
                : c == "State"                       ? &col.state
                : c == "Protect"                     ? &col.protect
                : c == "Image"                       ? &col.image
                                                     : nullptr;
    if (role == nullptr) continue;
    // Two cells for one column: which one a row's value is read from
    // would be a guess.
    if (*role >= 0)
      return text.Error(n, absl::StrFormat("maddress header has two '%s' columns (cells %d and %d)",
                                           c, *role + 1, i + 1));
    *role = static_cast<int>(i);
  }
  if (col.end < 0)
    return text.Error(n, absl::StrCat("maddress header has no EndAddr-1 column: ",
                                      TextLines::Quote(text.line(n))));
  return col;
}

// Before the header: skipped lines, '#' comments and the top border, which
// must be right above the header.
absl::Status OnBefore(const TextLines& text, int n, absl::string_view t, Reading* r,
                      RegionTable* table) {
  // '#' comments: `pageblame dotnet-regions` says what the table is.
  if (t.empty() || t[0] == '#') return absl::OkStatus();
  if (SosMaddressParser::IsHeader(t)) {
    if (!r->last_was_border)
      return text.Error(n, "maddress header without the top border '+---+' above it");
    ASSIGN_OR_RETURN(r->col, HeaderColumns(text, n, Cells(t)));
    r->header_line = n;
    r->where = Where::kAfterHeader;
    return absl::OkStatus();
  }
  r->last_was_border = IsBorder(t);
  if (!r->last_was_border) table->Skip(n, "before the maddress table");
  return absl::OkStatus();
}

// The line under the header: its border, nothing else.
absl::Status OnAfterHeader(const TextLines& text, int n, absl::string_view t, Reading* r) {
  if (!IsBorder(t))
    return text.Error(n, absl::StrCat("expected the border '+---+' under the maddress "
                                      "header, got ", TextLines::Quote(text.line(n))));
  r->where = Where::kRows;
  return absl::OkStatus();
}

// The region of row line `n`, split into `cells` as the header's columns.
absl::StatusOr<Region> RowRegion(const TextLines& text, int n, const Columns& col,
                                 const std::vector<absl::string_view>& cells) {
  Region r;
  r.line = n;
  for (auto [c, out] : {std::pair{col.start, &r.start}, std::pair{col.end, &r.end}}) {
    absl::StatusOr<uint64_t> a = ParseAddress(cells[c]);
    if (!a.ok()) return text.Error(n, a.status().message());
    *out = *a;
  }
  if (r.end <= r.start)
    return text.Error(n, absl::StrFormat("EndAddr-1 0x%x is not above StartAddr 0x%x",
                                         r.end, r.start));
  if (col.size >= 0) {
    absl::Status s = SosMaddressParser::CheckSize(cells[col.size], r.end - r.start);
    if (!s.ok()) return text.Error(n, s.message());
  }
  r.type = std::string(Cell(cells, col.type));
  r.state = std::string(Cell(cells, col.state));
  r.protect = std::string(Cell(cells, col.protect));
  r.usage = std::string(Cell(cells, col.kind));
  absl::string_view image = Cell(cells, col.image);
  if (!image.empty())
    r.usage = r.usage.empty() ? absl::StrCat("[", image, "]")
                              : absl::StrCat(r.usage, " [", image, "]");
  return r;
}

// Inside the table: a row with as many cells as the header, or the bottom
// border that ends the table.
absl::Status OnRows(const TextLines& text, int n, absl::string_view t, Reading* r,
                    RegionTable* table) {
  if (IsBorder(t)) {
    r->where = Where::kAfter;
    return absl::OkStatus();
  }
  if (t.empty())
    return text.Error(n, "blank line inside the maddress table (bottom border missing?)");
  std::vector<absl::string_view> cells = Cells(t);
  if (cells.empty())
    return text.Error(n, absl::StrCat("expected a row '| Memory Kind | StartAddr | "
                                      "EndAddr-1 | ... |' or the bottom border '+---+', got ",
                                      TextLines::Quote(text.line(n))));
  if (cells.size() != r->col.count)
    return text.Error(n, absl::StrFormat("expected %d cells as in the header (line %d), "
                                         "got %d in %s",
                                         r->col.count, r->header_line, cells.size(),
                                         TextLines::Quote(text.line(n))));
  ASSIGN_OR_RETURN(Region region, RowRegion(text, n, r->col, cells));
  table->regions.push_back(std::move(region));
  return absl::OkStatus();
}

// After the bottom border: the summary tables maddress prints next.
void OnAfter(int n, absl::string_view t, RegionTable* table) {
  if (!t.empty() && t[0] != '#') table->Skip(n, "after the end of the maddress table");
}

// Line `n`, by its handler for the part of the table the lines before it reached.
absl::Status ReadLine(const TextLines& text, int n, Reading* r, RegionTable* table) {
  absl::string_view t = absl::StripAsciiWhitespace(text.line(n));
  switch (r->where) {
    case Where::kBefore: return OnBefore(text, n, t, r, table);
    case Where::kAfterHeader: return OnAfterHeader(text, n, t, r);
    case Where::kRows: return OnRows(text, n, t, r, table);
    case Where::kAfter: OnAfter(n, t, table); break;
  }
  return absl::OkStatus();
}

}  // namespace

bool SosMaddressParser::IsHeader(absl::string_view line) {
  std::vector<absl::string_view> cells = Cells(absl::StripAsciiWhitespace(line));
  for (absl::string_view c : cells)
    if (c == "StartAddr") return true;
  return false;
}

absl::Status SosMaddressParser::CheckSize(absl::string_view size, uint64_t bytes) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("Size '", size, "' ", why));
  };
  size_t unit_at = 0;
  while (unit_at < size.size() && !absl::ascii_isalpha(static_cast<unsigned char>(size[unit_at])))
    ++unit_at;
  std::string unit = absl::AsciiStrToLower(size.substr(unit_at));
  absl::string_view number = absl::StripAsciiWhitespace(size.substr(0, unit_at));
  uint64_t multiplier;
  if (unit == "b") multiplier = 1;
  else if (unit == "kb") multiplier = uint64_t{1} << 10;
  else if (unit == "mb") multiplier = uint64_t{1} << 20;
  else if (unit == "gb") multiplier = uint64_t{1} << 30;
  else if (unit == "tb") multiplier = uint64_t{1} << 40;
  else return bad("has no b/kb/mb/gb/tb unit");
  size_t sep = number.find_first_of(",.");
  absl::string_view whole = number.substr(0, sep);
  absl::string_view frac = sep == absl::string_view::npos ? "" : number.substr(sep + 1);
  auto digits_only = [](absl::string_view s) {
    return s.size() <= 12 && std::all_of(s.begin(), s.end(), [](char c) {
             return absl::ascii_isdigit(static_cast<unsigned char>(c));
           });
  };
  if (whole.empty() || !digits_only(whole) || !digits_only(frac))
    return bad("is not a number with an optional ',' or '.' decimal part");
  // Compare in units of 10^-decimals of the printed unit, exactly:
  // |bytes * 10^d - value * unit| <= unit / 2, both sides doubled.
  unsigned __int128 scale = 1;
  for (size_t i = 0; i < frac.size(); ++i) scale *= 10;
  unsigned __int128 value = 0;
  for (char c : whole) value = value * 10 + static_cast<unsigned>(c - '0');
  for (char c : frac) value = value * 10 + static_cast<unsigned>(c - '0');
  unsigned __int128 actual = static_cast<unsigned __int128>(bytes) * scale * 2;
  unsigned __int128 printed = value * multiplier * 2;
  unsigned __int128 diff = actual > printed ? actual - printed : printed - actual;
  if (diff > multiplier)
    return bad(absl::StrFormat("does not match EndAddr-1 - StartAddr = %u bytes", bytes));
  return absl::OkStatus();
}

absl::StatusOr<RegionTable> SosMaddressParser::Parse(const TextLines& text) {
  RegionTable table;
  table.format = std::string(kFormat);
  table.has_state = true;
  Reading reading;
  for (int n = 1; n <= text.size(); ++n) RETURN_IF_ERROR(ReadLine(text, n, &reading, &table));
  if (reading.where == Where::kBefore)
    return text.FileError("no SOS maddress table (header '| Memory Kind | StartAddr | "
                          "EndAddr-1 | ... |') found");
  if (reading.where != Where::kAfter)
    return text.Error(text.size(), "maddress table not closed: no bottom border '+---+' "
                                   "(truncated copy?)");
  if (table.regions.empty()) return text.Error(reading.header_line, "maddress table has no rows");
  return table;
}

}  // namespace pageblame::regions

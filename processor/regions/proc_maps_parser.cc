#include "processor/regions/proc_maps_parser.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "processor/base/status_macros.h"
#include "processor/regions/address.h"

namespace pageblame::regions {
namespace {

constexpr absl::string_view kExpected = "expected 'START-END PERMS OFFSET MAJ:MIN INODE [PATH]'";

bool IsBareHex(absl::string_view s) {
  return !s.empty() && s.size() <= 16 && std::all_of(s.begin(), s.end(), [](char c) {
    return absl::ascii_isxdigit(static_cast<unsigned char>(c));
  });
}

bool IsPerm(absl::string_view s) {
  return s.size() == 4 && (s[0] == 'r' || s[0] == '-') && (s[1] == 'w' || s[1] == '-') &&
         (s[2] == 'x' || s[2] == '-') && (s[3] == 'p' || s[3] == 's');
}

// "Size:", "VmFlags:", "THPeligible:" — an smaps field line.
bool IsSmapsField(absl::string_view first_field) {
  return first_field.size() >= 2 && first_field.back() == ':' &&
         absl::ascii_isupper(static_cast<unsigned char>(first_field[0]));
}

// The "START" of "START-END", if the field starts that way.
bool StartsLikeRange(absl::string_view f0) {
  size_t dash = f0.find('-');
  return dash != absl::string_view::npos && dash > 0 && IsBareHex(f0.substr(0, dash));
}

// "Rss: N kB" of the entry whose mapping line is table->regions.back().
absl::Status ReadRss(const TextLines& text, int n, const std::vector<absl::string_view>& f,
                     RegionTable* table) {
  uint64_t kib = 0;
  if (table->regions.empty() || f.size() != 3 || f[2] != "kB" || !absl::SimpleAtoi(f[1], &kib))
    return text.Error(n, absl::StrCat("expected 'Rss: N kB' in the entry of a mapping line, got ",
                                      TextLines::Quote(text.line(n))));
  RegionList& rows = table->regions;
  const size_t last = rows.size() - 1;
  const uint64_t size = rows.end(last) - rows.start(last);
  if (rows.rss(last))
    return text.Error(n, absl::StrFormat("a second Rss: line in the entry of line %d", rows.line(last)));
  if (kib > size / 1024)
    return text.Error(n, absl::StrFormat("Rss: %d kB is more than the mapping 0x%x-0x%x above "
                                         "(%d kB)", kib, rows.start(last), rows.end(last), size / 1024));
  rows.set_rss(last, kib * 1024);
  return absl::OkStatus();
}

// Every entry has an Rss: line or none has (then rss is unknown).
absl::Status CheckRssEverywhere(const TextLines& text, RegionTable* table) {
  const RegionList& rows = table->regions;
  size_t with = 0;
  for (size_t i = 0; i < rows.size(); ++i) with += rows.rss(i).has_value();
  if (with == 0) {
    if (table->format == "smaps") table->rss_note = "no Rss: lines in these smaps entries";
    return absl::OkStatus();
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!rows.rss(i))
      return text.Error(rows.line(i), "this smaps entry has no Rss: line (other entries have one)");
  }
  table->has_rss = true;
  return absl::OkStatus();
}

}  // namespace

bool ProcMapsParser::LooksLikeRow(absl::string_view line) {
  std::vector<absl::string_view> f = TextLines::Fields(line);
  if (f.size() < 5 || !StartsLikeRange(f[0])) return false;
  size_t dash = f[0].find('-');
  uint64_t inode;
  return IsBareHex(f[0].substr(dash + 1)) && IsPerm(f[1]) && IsBareHex(f[2]) &&
         absl::StrContains(f[3], ':') && absl::SimpleAtoi(f[4], &inode);
}

absl::StatusOr<RegionTable> ProcMapsParser::Parse(const TextLines& text) {
  RegionTable table;
  table.format = "maps";
  for (int n = 1; n <= text.size(); ++n) {
    absl::string_view line = text.line(n);
    std::vector<absl::string_view> f = TextLines::Fields(line);
    if (f.empty()) continue;
    if (IsSmapsField(f[0])) {
      table.format = "smaps";
      if (f[0] == "Size:") {
        uint64_t kib = 0;
        const RegionList& rows = table.regions;
        if (rows.empty() || rows.line(rows.size() - 1) != n - 1 || f.size() != 3 ||
            f[2] != "kB" || !absl::SimpleAtoi(f[1], &kib))
          return text.Error(n, absl::StrCat("expected 'Size: N kB' right after a mapping line, "
                                            "got ", TextLines::Quote(line)));
        const uint64_t start = rows.start(rows.size() - 1), end = rows.end(rows.size() - 1);
        if (kib * 1024 != end - start)
          return text.Error(n, absl::StrFormat("Size: %d kB does not match the mapping "
                                               "0x%x-0x%x above (%d kB)",
                                               kib, start, end, (end - start) / 1024));
      } else if (f[0] == "Rss:") {
        RETURN_IF_ERROR(ReadRss(text, n, f, &table));
      }
      continue;
    }
    if (!StartsLikeRange(f[0])) {
      table.Skip(n, absl::StrCat("not a maps line: ", TextLines::Quote(line)));
      continue;
    }
    if (!LooksLikeRow(line))
      return text.Error(n, absl::StrCat(kExpected, ", got ", TextLines::Quote(line)));
    size_t dash = f[0].find('-');
    absl::StatusOr<uint64_t> start = ParseAddress(f[0].substr(0, dash));
    absl::StatusOr<uint64_t> end = ParseAddress(f[0].substr(dash + 1));
    if (!start.ok() || !end.ok())
      return text.Error(n, (start.ok() ? end : start).status().message());
    if (*end <= *start)
      return text.Error(n, absl::StrFormat("END 0x%x is not above START 0x%x", *end, *start));
    // The kernel maps whole pages: anything else would make sub-page pieces
    // in a page diff.
    if (*start % kPageSize != 0 || *end % kPageSize != 0)
      return text.Error(n, absl::StrFormat("0x%x-0x%x is not page-aligned (4 KiB pages)", *start,
                                           *end));
    Region r;
    r.start = *start;
    r.end = *end;
    r.line = n;
    r.protect = std::string(f[1]);
    if (f.size() > 5) r.usage = std::string(TextLines::RestFrom(line, f[5]));
    table.regions.push_back(std::move(r));
  }
  if (table.regions.empty()) return text.FileError(absl::StrCat("no maps lines found (", kExpected, ")"));
  RETURN_IF_ERROR(CheckRssEverywhere(text, &table));
  return table;
}

}  // namespace pageblame::regions

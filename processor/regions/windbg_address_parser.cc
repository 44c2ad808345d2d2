#include "processor/regions/windbg_address_parser.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "processor/regions/address.h"

namespace pageblame::regions {
namespace {

constexpr absl::string_view kExpected =
    "expected 'BaseAddress EndAddress+1 RegionSize Type State Protect Usage'";

bool IsType(absl::string_view s) {
  return s == "MEM_PRIVATE" || s == "MEM_IMAGE" || s == "MEM_MAPPED";
}
bool IsState(absl::string_view s) {
  return s == "MEM_COMMIT" || s == "MEM_RESERVE" || s == "MEM_FREE";
}
bool IsDashes(absl::string_view s) {
  return !s.empty() && s.find_first_not_of('-') == absl::string_view::npos;
}

// "Image      [dotnet; ...]" -> "Image [dotnet; ...]": drop the column padding
// between the usage word and its bracketed detail, keep the detail verbatim.
std::string NormalizeUsage(absl::string_view usage) {
  size_t gap = usage.find_first_of(" \t");
  if (gap == absl::string_view::npos) return std::string(usage);
  size_t detail = usage.find_first_not_of(" \t", gap);
  if (detail == absl::string_view::npos) return std::string(usage.substr(0, gap));
  return absl::StrCat(usage.substr(0, gap), " ", usage.substr(detail));
}

}  // namespace

bool WindbgAddressParser::IsHeader(absl::string_view line) {
  std::vector<absl::string_view> f = TextLines::Fields(line);
  return f.size() >= 3 && (f[0] == "BaseAddress" || f[0] == "BaseAddr") &&
         (f[1] == "EndAddress+1" || f[1] == "EndAddr+1");
}

bool WindbgAddressParser::LooksLikeRow(absl::string_view line) {
  std::vector<absl::string_view> f = TextLines::Fields(line);
  size_t i = (!f.empty() && f[0] == "+") ? 1 : 0;
  if (f.size() < i + 3) return false;
  for (size_t k = i; k < i + 3; ++k)
    if (!IsAddress(f[k])) return false;
  bool backtick = f[i].find('`') != absl::string_view::npos;
  bool mem_word = f.size() > i + 3 && absl::StartsWith(f[i + 3], "MEM_");
  return backtick || mem_word;
}

absl::StatusOr<RegionTable> WindbgAddressParser::Parse(const TextLines& text) {
  RegionTable table;
  table.format = std::string(kFormat);
  table.has_state = true;
  for (int n = 1; n <= text.size(); ++n) {
    absl::string_view line = text.line(n);
    absl::string_view trimmed = absl::StripAsciiWhitespace(line);
    if (trimmed.empty() || IsDashes(trimmed)) continue;
    std::vector<absl::string_view> f = TextLines::Fields(line);
    if (f[0] == "BaseAddress" || f[0] == "BaseAddr") {
      bool ok = IsHeader(line) && f.size() == 7 && (f[2] == "RegionSize" || f[2] == "RgnSize") &&
                f[3] == "Type" && f[4] == "State" && f[5] == "Protect" && f[6] == "Usage";
      if (!ok) return text.Error(n, absl::StrCat(kExpected, " header, got ", TextLines::Quote(line)));
      continue;
    }
    size_t i = f[0] == "+" ? 1 : 0;
    // A row starts with '+', a backtick address, or two addresses; a lone
    // hex-looking word ("Face", "add") in a prompt or summary line does not.
    bool starts_like_row = i == 1 || (IsAddress(f[0]) && f[0].find('`') != absl::string_view::npos) ||
                           (f.size() >= 2 && IsAddress(f[0]) && IsAddress(f[1]));
    if (!starts_like_row) {
      table.Skip(n, absl::StrCat("not a region row: ", TextLines::Quote(line)));
      continue;
    }
    // From here the line starts like a row, so it must parse completely.
    if (f.size() < i + 3)
      return text.Error(n, absl::StrCat(kExpected, ", got ", TextLines::Quote(line)));
    uint64_t v[3];
    for (size_t k = 0; k < 3; ++k) {
      absl::StatusOr<uint64_t> a = ParseAddress(f[i + k]);
      if (!a.ok())
        return text.Error(n, absl::StrCat(kExpected, ", got ", TextLines::Quote(line), ": ",
                                          a.status().message()));
      v[k] = *a;
    }
    Region r;
    r.start = v[0];
    r.end = v[1];
    r.line = n;
    if (r.end <= r.start)
      return text.Error(n, absl::StrFormat("EndAddress+1 0x%x is not above BaseAddress 0x%x",
                                           r.end, r.start));
    if (r.end - r.start != v[2])
      return text.Error(n, absl::StrFormat(
                               "RegionSize 0x%x != EndAddress+1 - BaseAddress = 0x%x in %s",
                               v[2], r.end - r.start, TextLines::Quote(line)));
    size_t j = i + 3;
    std::vector<absl::string_view> mem;
    while (j < f.size() && mem.size() < 2 && absl::StartsWith(f[j], "MEM_")) mem.push_back(f[j++]);
    if (mem.size() == 2) {
      r.type = std::string(mem[0]);
      r.state = std::string(mem[1]);
    } else if (mem.size() == 1) {
      (IsState(mem[0]) ? r.state : r.type) = std::string(mem[0]);
    }
    // An unknown word here would make the committed total silently wrong.
    if (!r.type.empty() && !IsType(r.type))
      return text.Error(n, absl::StrCat("unknown Type '", r.type, "' (expected MEM_PRIVATE, "
                                        "MEM_IMAGE or MEM_MAPPED)"));
    if (!r.state.empty() && !IsState(r.state))
      return text.Error(n, absl::StrCat("unknown State '", r.state, "' (expected MEM_COMMIT, "
                                        "MEM_RESERVE or MEM_FREE)"));
    if (j < f.size() && absl::StartsWith(f[j], "PAGE_")) {
      r.protect = std::string(f[j++]);
      while (j + 1 < f.size() && f[j] == "|" && absl::StartsWith(f[j + 1], "PAGE_")) {
        absl::StrAppend(&r.protect, " | ", f[j + 1]);
        j += 2;
      }
    }
    if (j < f.size()) r.usage = NormalizeUsage(TextLines::RestFrom(line, f[j]));
    table.regions.push_back(std::move(r));
  }
  if (table.regions.empty())
    return text.FileError(absl::StrCat("no WinDbg !address rows found (", kExpected, ")"));
  return table;
}

}  // namespace pageblame::regions

#include "processor/regions/region_table_reader.h"

#include <memory>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "processor/base/input_file.h"
#include "processor/base/status_macros.h"
#include "processor/regions/address.h"
#include "processor/regions/core_file_parser.h"
#include "processor/regions/page_diff_output_parser.h"
#include "processor/regions/pmap_parser.h"
#include "processor/regions/proc_maps_parser.h"
#include "processor/regions/range_list_parser.h"
#include "processor/regions/sos_eeheap_parser.h"
#include "processor/regions/sos_maddress_parser.h"
#include "processor/regions/text_encoding.h"
#include "processor/regions/windbg_address_parser.h"

namespace pageblame::regions {
namespace {

constexpr RegionFormat kDetectionOrder[] = {
    RegionFormat::kWindbgAddress, RegionFormat::kSosMaddress, RegionFormat::kSosEeheap,
    RegionFormat::kPageDiff,      RegionFormat::kPmap,        RegionFormat::kProcMaps,
    RegionFormat::kRangeList};

// The line starts with an address (after a WinDbg '+'), maybe the START of
// "START-END": what a data row of every format does, and prose does not.
bool LooksLikeData(absl::string_view line) {
  std::vector<absl::string_view> f = TextLines::Fields(line);
  size_t i = !f.empty() && f[0] == "+" ? 1 : 0;
  if (f.size() <= i) return false;
  absl::string_view first = f[i].substr(0, f[i].find_first_of("-,"));
  return IsAddress(first);
}

absl::Status Unrecognized(const TextLines& text, int first_nonblank) {
  return text.FileError(absl::StrCat(
      "not a recognized region table (WinDbg !address, SOS maddress or eeheap, page-diff result, "
      "pmap -X/-XX, /proc/PID/maps or smaps, an address/range list, or an ELF core file): no line "
      "looks like one; line ",
      first_nonblank, " is ", TextLines::Quote(text.line(first_nonblank))));
}

absl::Status Binary(const TextLines& text) {
  std::string hint;
  if (TextEncoding::LooksLikeUtf16WithoutBom(text.line(1)))
    hint = "; it looks like UTF-16 text without a byte-order mark: convert it with "
           "'iconv -f UTF-16LE -t UTF-8' (or UTF-16BE)";
  return text.FileError(absl::StrCat("binary file, not a region table", hint));
}

}  // namespace

absl::StatusOr<RegionFormat> RegionTableReader::Detect(const TextLines& text, int* line) {
  if (text.has_nul()) return Binary(text);
  int first_nonblank = 0;
  for (int n = 1; n <= text.size(); ++n) {
    absl::string_view l = text.line(n);
    if (absl::StripAsciiWhitespace(l).empty()) continue;
    if (first_nonblank == 0) first_nonblank = n;
    if (line) *line = n;
    if (WindbgAddressParser::IsHeader(l)) return RegionFormat::kWindbgAddress;
    if (SosMaddressParser::IsHeader(l)) return RegionFormat::kSosMaddress;
    if (SosEeheapParser::IsSignature(l)) return RegionFormat::kSosEeheap;
    if (PageDiffOutputParser::IsSummaryLine(l) || PageDiffOutputParser::LooksLikeRow(l))
      return RegionFormat::kPageDiff;
    if (PmapParser::IsHeader(l)) return RegionFormat::kPmap;
    if (ProcMapsParser::LooksLikeRow(l)) return RegionFormat::kProcMaps;
    if (PmapParser::LooksLikeRow(l)) return RegionFormat::kPmap;
    if (WindbgAddressParser::LooksLikeRow(l)) return RegionFormat::kWindbgAddress;
    if (RangeListParser::LooksLikeEntry(l)) return RegionFormat::kRangeList;
  }
  if (first_nonblank == 0) return text.FileError("empty file, no regions");
  // `dotnet-dump analyze DUMP -c maddress` (and lldb's SOS) cannot run maddress:
  // it needs the debugger's region list, which SOS only gets from DbgEng's
  // `!address` (dotnet/diagnostics TargetFromDebuggerServices.cs registers
  // IMemoryRegionService for HostType.DbgEng only). The file then holds SOS's
  // refusal, which users would otherwise see as "no line looks like a table".
  for (int n = 1; n <= text.size(); ++n) {
    if (absl::StrContains(text.line(n), "memory region service does not exist")) {
      return text.Error(
          n, absl::StrCat(
                 "SOS maddress did not run here (", TextLines::Quote(text.line(n)),
                 "): maddress needs WinDbg or cdb; dotnet-dump and lldb cannot run it. Make the "
                 "runtime's table with 'pageblame dotnet-regions DUMP -o regions.txt' (or "
                 "'dotnet-dump analyze DUMP -c eeheap') and pass that file instead"));
    }
  }
  return ClosestError(text, first_nonblank);
}

absl::Status RegionTableReader::ClosestError(const TextLines& text, int first_nonblank) {
  absl::Status best;
  int best_line = 0;
  RegionFormat best_format = RegionFormat::kRangeList;
  for (RegionFormat format : kDetectionOrder) {
    absl::StatusOr<RegionTable> t = ParseAs(format, text);
    int line = t.ok() ? 0 : TextLines::ErrorLine(t.status());
    if (line > best_line && LooksLikeData(text.line(line))) {
      best = t.status();
      best_line = line;
      best_format = format;
    }
  }
  if (best_line == 0) return Unrecognized(text, first_nonblank);
  return absl::InvalidArgumentError(
      absl::StrCat(best.message(), " (the closest format, ", FormatName(best_format),
                   ": no line has the exact form of a supported table)"));
}

absl::StatusOr<RegionTable> RegionTableReader::ParseAs(RegionFormat format,
                                                       const TextLines& text) {
  switch (format) {
    case RegionFormat::kWindbgAddress: return WindbgAddressParser::Parse(text);
    case RegionFormat::kSosMaddress: return SosMaddressParser::Parse(text);
    case RegionFormat::kSosEeheap: return SosEeheapParser::Parse(text);
    case RegionFormat::kPageDiff: return PageDiffOutputParser::Parse(text);
    case RegionFormat::kPmap: return PmapParser::Parse(text);
    case RegionFormat::kProcMaps: return ProcMapsParser::Parse(text);
    case RegionFormat::kRangeList: return RangeListParser::Parse(text);
  }
  return absl::InternalError("unknown region format");
}

absl::StatusOr<RegionTable> RegionTableReader::Parse(const TextLines& text) {
  ASSIGN_OR_RETURN(RegionFormat format, Detect(text));
  return ParseAs(format, text);
}

absl::StatusOr<RegionTable> RegionTableReader::ParseString(std::string text, std::string name) {
  if (CoreFileParser::IsElf(text)) return CoreFileParser::ParseBytes(std::move(text), name);
  ASSIGN_OR_RETURN(std::string utf8, TextEncoding::ToUtf8(std::move(text), name));
  return Parse(TextLines(std::move(name), std::move(utf8)));
}

absl::StatusOr<RegionTable> RegionTableReader::DetectAndParse(const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<InputFile> file,
                   InputFile::Open(path, "region table", InputFile::Accept::kRegularOrStream));
  // A core is read in place (headers and notes only); text is read whole.
  if (file->is_regular()) {
    ASSIGN_OR_RETURN(std::string head, file->ReadAt(0, 4));
    if (CoreFileParser::IsElf(head))
      return CoreFileParser::ParseFile(file->fd(), file->size(), path);
  }
  ASSIGN_OR_RETURN(std::string contents, file->ReadAll());
  return ParseString(std::move(contents), path);
}

absl::string_view RegionTableReader::FormatName(RegionFormat format) {
  switch (format) {
    case RegionFormat::kWindbgAddress: return WindbgAddressParser::kFormat;
    case RegionFormat::kSosMaddress: return SosMaddressParser::kFormat;
    case RegionFormat::kSosEeheap: return SosEeheapParser::kFormat;
    case RegionFormat::kPageDiff: return PageDiffOutputParser::kFormat;
    case RegionFormat::kPmap: return PmapParser::kFormat;
    case RegionFormat::kProcMaps: return "maps";
    case RegionFormat::kRangeList: return RangeListParser::kFormat;
  }
  return "unknown";
}

}  // namespace pageblame::regions

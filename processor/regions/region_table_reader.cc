#include "processor/regions/region_table_reader.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "processor/base/status_macros.h"
#include "processor/regions/page_diff_output_parser.h"
#include "processor/regions/pmap_parser.h"
#include "processor/regions/proc_maps_parser.h"
#include "processor/regions/range_list_parser.h"
#include "processor/regions/sos_maddress_parser.h"
#include "processor/regions/windbg_address_parser.h"

namespace pageblame::regions {

absl::StatusOr<RegionFormat> RegionTableReader::Detect(const TextLines& text, int* line) {
  if (text.has_nul()) return text.FileError("binary file, not a region table");
  int first_nonblank = 0;
  for (int n = 1; n <= text.size(); ++n) {
    absl::string_view l = text.line(n);
    if (absl::StripAsciiWhitespace(l).empty()) continue;
    if (first_nonblank == 0) first_nonblank = n;
    if (line) *line = n;
    if (WindbgAddressParser::IsHeader(l)) return RegionFormat::kWindbgAddress;
    if (SosMaddressParser::IsHeader(l)) return RegionFormat::kSosMaddress;
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
                 "): maddress needs WinDbg or cdb; dotnet-dump and lldb cannot run it. Run "
                 "!maddress on the dump in WinDbg, or list the runtime's own ranges from the dump "
                 "with traces/src/clr-regions (ClrMD) and pass that file instead"));
    }
  }
  return text.FileError(absl::StrCat(
      "not a recognized region table (WinDbg !address, SOS maddress, page-diff result, "
      "pmap -X/-XX, /proc/PID/maps or smaps, or an address/range list): no line looks like one; "
      "line ",
      first_nonblank, " is ", TextLines::Quote(text.line(first_nonblank))));
}

absl::StatusOr<RegionTable> RegionTableReader::ParseAs(RegionFormat format,
                                                       const TextLines& text) {
  switch (format) {
    case RegionFormat::kWindbgAddress: return WindbgAddressParser::Parse(text);
    case RegionFormat::kSosMaddress: return SosMaddressParser::Parse(text);
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
  return Parse(TextLines(std::move(name), std::move(text)));
}

absl::StatusOr<RegionTable> RegionTableReader::DetectAndParse(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat("cannot read ", path));
  return ParseString(contents.str(), path);
}

absl::string_view RegionTableReader::FormatName(RegionFormat format) {
  switch (format) {
    case RegionFormat::kWindbgAddress: return WindbgAddressParser::kFormat;
    case RegionFormat::kSosMaddress: return SosMaddressParser::kFormat;
    case RegionFormat::kPageDiff: return PageDiffOutputParser::kFormat;
    case RegionFormat::kPmap: return PmapParser::kFormat;
    case RegionFormat::kProcMaps: return "maps";
    case RegionFormat::kRangeList: return RangeListParser::kFormat;
  }
  return "unknown";
}

}  // namespace pageblame::regions

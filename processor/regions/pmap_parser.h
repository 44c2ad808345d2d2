// PmapParser: `pmap -X` / `pmap -XX` (procps) output, with or without the
// column header (-q drops it, as the peer sample and the seed categorizer do).
//
//   5159:   dotnet /homep/demo/src/demo/bin/Debug/net7.0/demo.dll
//            Address Perm   Offset Device  Inode Size KernelPageSize ... THPeligible VmFlags Mapping
//       5585e95a2000 r--p 00000000  08:01 915517   48              4 ...           0 rd mr mw me sd dotnet
//       ...
//                                                ==== ============== ... (footer, then totals)
//
// pmap prints one column per field the kernel's /proc/PID/smaps has, so the
// set differs between kernels (this machine's 6.x has Pss_Dirty and KSM that
// the sample's kernel lacks). With a header, columns are found by name:
// Address, Perm (or -x's Mode), Size (or -x's Kbytes, both KiB), optional
// VmFlags, and Mapping (the rest of the line: names may contain spaces, e.g.
// "memfd:doublemapper (deleted)"). Without a header, the -X/-XX layout is
// assumed: Address Perm Offset Device Inode Size, then the kernel's numeric
// fields (their count is the most common run of decimal fields in the file;
// a row with fewer is an error), then two-letter VmFlags, then Mapping.
//
// Region: [Address, Address + Size KiB), protect = Perm ("r-xp"), usage =
// Mapping, no type/state (every pmap row is mapped, so all count), rss =
// the Rss column (KiB; -x's RSS) found by name in the header. Without a
// header rss is read only where the column is certain: the -XX layout of
// kernels since 4.14 (VmFlags on every row, KernelPageSize and MMUPageSize
// after Size, then Rss = Shared_Clean + Shared_Dirty + Private_Clean +
// Private_Dirty on every row). Headerless -X, -XX of older kernels (Rss
// right after Size there) and -f/-c field lists cannot be told apart
// without the header, so their rss is unset (unknown, not 0) and
// RegionTable::rss_note says why. An Rss that is not a number or exceeds
// the row's Size is an error naming the line.
// The "PID: command" line is read; output for a second process is an error
// (regions of two address spaces must not be mixed). The footer (a "====" or
// "----" line and the totals under it) ends the table; lines after it and
// other non-row lines are counted as skipped.
#ifndef PAGEBLAME_REGIONS_PMAP_PARSER_H_
#define PAGEBLAME_REGIONS_PMAP_PARSER_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "processor/regions/region.h"
#include "processor/regions/text_lines.h"

namespace pageblame::regions {

class PmapParser {
 public:
  static constexpr absl::string_view kFormat = "pmap";

  // "   Address Perm Offset ..." or "Address Kbytes RSS Dirty Mode Mapping".
  static bool IsHeader(absl::string_view line);
  // "5159:   dotnet ..." (the first line pmap prints for each process).
  static bool IsPidLine(absl::string_view line);
  // A headerless -X/-XX row: hex address, perm, hex offset, major:minor, inode, size.
  static bool LooksLikeRow(absl::string_view line);

  static absl::StatusOr<RegionTable> Parse(const TextLines& text);
};

}  // namespace pageblame::regions

#endif  // PAGEBLAME_REGIONS_PMAP_PARSER_H_

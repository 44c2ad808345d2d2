// PageDiffOutputParser: the plain-text result of the seed page-diff tool
// (the Rust "native managed memory page diff" that compares WinDbg !address
// with SOS maddress), so its "unaccounted" list can be fed to `attribute`.
//
//   Memory regions found by sos maddress command: 3469
//   Memory regions found by windbg address command: 3452
//   After distinct: 353
//   Memory regions found by windbg address but not by sos maddress: 7
//   78e13f400000 - 78e145b1b000 Size: 103MB    Type: MEM_PRIVATE  State: MEM_COMMIT   Protection: PAGE_READWRITE           Kind: <unknown>            Usage: [........0.......]
//   ...
//   Total unaccounted size: 672MB
//   Memory regions found by sos maddress but not by windbg address: 370
//   78e84b3a0000 - 78e84b3b0000 Size: 64KB     Type: MEM_PRIVATE  State: MEM_COMMIT   Protection: PAGE_READWRITE           Kind: HighFrequencyHeap    Usage:
//
// - The end address is exclusive (78e13f400000 - 78e145b1b000 is the WinDbg
//   row with EndAddress+1 78e1`45b1b000).
// - Size is the seed's rounded-down integer in B/KB/MB/GB; it is checked:
//   floor((end - start) / unit) must equal it, else the row is an error.
// - Sections: the result has two lists, "found by windbg address but not by
//   sos maddress" (the unaccounted regions) and the reverse. Only the FIRST
//   "... but not by ..." section is read; rows of later sections are counted
//   as skipped. A file holding only rows (no section titles) is read whole.
// - Usage is "Kind" plus the seed's Usage: "<unknown> [........0.......]"
//   (matching how the WinDbg parser spells it) or "Image [System_Linq]".
// - The seed's count/total lines are ignored; other non-row lines are counted
//   as skipped; a line that starts like a row but does not parse is an error.
#ifndef PAGEBLAME_REGIONS_PAGE_DIFF_OUTPUT_PARSER_H_
#define PAGEBLAME_REGIONS_PAGE_DIFF_OUTPUT_PARSER_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "processor/regions/region.h"
#include "processor/regions/text_lines.h"

namespace pageblame::regions {

class PageDiffOutputParser {
 public:
  static constexpr absl::string_view kFormat = "page-diff";

  // "START - END Size: ..." with START and END addresses.
  static bool LooksLikeRow(absl::string_view line);
  // One of the seed's "Memory regions found by ..." summary/section lines.
  static bool IsSummaryLine(absl::string_view line);

  static absl::StatusOr<RegionTable> Parse(const TextLines& text);
};

}  // namespace pageblame::regions

#endif  // PAGEBLAME_REGIONS_PAGE_DIFF_OUTPUT_PARSER_H_

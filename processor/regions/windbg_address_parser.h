// WindbgAddressParser: the region list of WinDbg's `!address` command.
//
//         BaseAddress      EndAddress+1        RegionSize     Type       State                 Protect             Usage
//   --------------------------------------------------------------------------------------------------------------------------
//   +        0`00000000     569d`3bd6e000     569d`3bd6e000                                                            <unknown>
//   +     569d`3bd6e000     569d`3bd7a000        0`0000c000 MEM_PRIVATE MEM_COMMIT  PAGE_READONLY                      Image      [dotnet; "/usr/share/dotnet/dotnet"]
//         78e1`16162800     78e1`16294000        0`00131800 MEM_PRIVATE MEM_COMMIT  PAGE_READWRITE                     <unknown>  [................]
//
// - '+' marks the first region of a new allocation (AllocationBase changes);
//   rows without it continue the allocation above. It does not change extents.
// - EndAddress+1 is the exclusive end; RegionSize must equal End - Base, and a
//   row where it does not is an error (a mangled copy, not data).
// - Free rows have empty Type/State/Protect ("<unknown>" or "Image [..]" usage
//   for gaps inside an image). Type/State/Protect are recognized by their
//   MEM_/PAGE_ prefixes, not by column position, so reflowed copies still
//   parse; "PAGE_X | PAGE_GUARD" is kept as one protect value.
// - Bounds need not be page-aligned: where an image's last section ends
//   mid-page, WinDbg splits there and an <unknown> row continues the
//   allocation (78e1`16162800 in the sample). We keep bounds exact.
// - Usage is the rest of the line, with the column padding between the usage
//   word and its "[...]" detail collapsed to one space: "Image [dotnet; ...]".
// Lines that do not start with an address (prompts, the "Usage Summary"
// tables WinDbg prints after the list) are counted as skipped; a line that
// starts like a row but does not parse is an error naming file and line.
// Both header spellings are accepted: BaseAddress/EndAddress+1/RegionSize and
// the older BaseAddr/EndAddr+1/RgnSize.
//
//   ASSIGN_OR_RETURN(RegionTable t, WindbgAddressParser::Parse(lines));
#ifndef PAGEBLAME_REGIONS_WINDBG_ADDRESS_PARSER_H_
#define PAGEBLAME_REGIONS_WINDBG_ADDRESS_PARSER_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "processor/regions/region.h"
#include "processor/regions/text_lines.h"

namespace pageblame::regions {

class WindbgAddressParser {
 public:
  static constexpr absl::string_view kFormat = "windbg-address";

  // The column header line (either spelling).
  static bool IsHeader(absl::string_view line);
  // Optional '+', then three addresses, the first in backtick form or the
  // fourth token a MEM_ word: a row even without the header above it.
  static bool LooksLikeRow(absl::string_view line);

  static absl::StatusOr<RegionTable> Parse(const TextLines& text);
};

}  // namespace pageblame::regions

#endif  // PAGEBLAME_REGIONS_WINDBG_ADDRESS_PARSER_H_

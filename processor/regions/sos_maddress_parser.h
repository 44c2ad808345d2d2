// SosMaddressParser: the bordered region list of SOS `!maddress --list`.
//
//  +------------------------------------------------------------------- ... -+
//  | Memory Kind            |        StartAddr |        EndAddr-1 |         Size | Type        | State       | Protect                | Image   |
//  +------------------------------------------------------------------- ... -+
//  | Image                  |     569d3bd6e000 |     569d3bd7a000 |      48,00kb | MEM_IMAGE   | MEM_COMMIT  | PAGE_READONLY          | dotnet  |
//  | HighFrequencyHeap      |     78e84b3a0000 |     78e84b3b0000 |      64,00kb | MEM_PRIVATE | MEM_COMMIT  | PAGE_READWRITE         |         |
//  +------------------------------------------------------------------- ... -+
//
// Despite its title, the "EndAddr-1" column holds the EXCLUSIVE end:
// dotnet/diagnostics MAddressCommand.cs prints `mem.End` under that title and
// sizes are `End - Start`. The sample agrees: every row's Size equals
// EndAddr-1 - StartAddr, the values are page-aligned (an inclusive end would
// end in ...fff), a row's EndAddr-1 equals the next row's StartAddr where the
// rows touch, and it equals WinDbg's EndAddress+1 for the same base.
//
// Size is ConvertToHumanReadable(): two decimals in the dump reader's culture
// ("48,00kb" or "48.00kb") and a kb/mb/gb unit. Each row's Size is checked
// against End - Start to within half a unit of the last printed digit; a row
// that disagrees is an error (it would mean the end column is not what we
// think, and every number downstream would be off).
//
// Columns are found by their header names, so reordered or missing optional
// columns (Memory Kind, Type, State, Protect, Image, Size) are fine; StartAddr
// and EndAddr-1 (or EndAddr) are required. Usage is "Kind" or "Kind [Image]".
// Structure is enforced: top border, header, border, rows, bottom border. A
// row without its '|' borders, a wrong cell count, a blank line inside the
// table or a missing bottom border (a truncated copy) are errors. Lines
// before the table and everything after its bottom border (the summary tables
// maddress prints next) are counted as skipped, except '#' comment lines
// (`pageblame dotnet-regions` writes what its table is that way).
#ifndef PAGEBLAME_REGIONS_SOS_MADDRESS_PARSER_H_
#define PAGEBLAME_REGIONS_SOS_MADDRESS_PARSER_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "processor/regions/region.h"
#include "processor/regions/text_lines.h"

namespace pageblame::regions {

class SosMaddressParser {
 public:
  static constexpr absl::string_view kFormat = "sos-maddress";

  // "| Memory Kind | StartAddr | EndAddr-1 | ..." (any leading whitespace).
  static bool IsHeader(absl::string_view line);

  static absl::StatusOr<RegionTable> Parse(const TextLines& text);

  // OK if the human-readable `size` ("48,00kb", "1.21mb", "3gb", "512b")
  // equals `bytes` to within half a unit of its last digit; InvalidArgument
  // saying why otherwise. Either ',' or '.' is the decimal separator.
  static absl::Status CheckSize(absl::string_view size, uint64_t bytes);
};

}  // namespace pageblame::regions

#endif  // PAGEBLAME_REGIONS_SOS_MADDRESS_PARSER_H_

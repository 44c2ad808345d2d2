// MaddressTableWriter: runtime rows as SOS `!maddress`'s bordered table, the
// form SosMaddressParser reads (so `diff` and `attribute --regions` take the
// file as they take maddress output), with a Detail column maddress lacks
// (the parser passes over columns it does not know) and '#' comment lines
// above the table (passed over too).
//
//   # pageblame dotnet-regions: the .NET runtime's own ranges in pid 4242
//    +--------------------------------------------------------- ... -+
//    | Memory Kind | StartAddr    | EndAddr-1    | Size    | Type        | State      | Protect        | Image | Detail      |
//    +--------------------------------------------------------- ... -+
//    | GCHeap      | 7fdba3000000 | 7fdba3003000 | 12.00kb | MEM_PRIVATE | MEM_COMMIT | PAGE_READWRITE |       | Pinned      |
//    +--------------------------------------------------------- ... -+
//
// EndAddr-1 holds the exclusive end, as maddress prints it (see
// sos_maddress_parser.h); Size is maddress's ConvertToHumanReadable form
// (two decimals, kb/mb/gb). A '|' inside a cell (a path) is written as '/'.
#ifndef PAGEBLAME_REGIONS_MADDRESS_TABLE_WRITER_H_
#define PAGEBLAME_REGIONS_MADDRESS_TABLE_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "processor/regions/runtime_table_builder.h"

namespace pageblame::regions {

class MaddressTableWriter {
 public:
  // `comments`: lines written first, each prefixed "# ".
  static std::string Write(const std::vector<RuntimeRow>& rows, const std::vector<std::string>& comments);
  // "48.00kb", "1.50mb", "46.90gb".
  static std::string HumanSize(uint64_t bytes);
};

}  // namespace pageblame::regions

#endif  // PAGEBLAME_REGIONS_MADDRESS_TABLE_WRITER_H_

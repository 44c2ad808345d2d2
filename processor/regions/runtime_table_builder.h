// RuntimeTableBuilder: the .NET runtime's own table of a process, as
// `pageblame dotnet-regions` writes it, from the ranges ClrMD gives
// (ClrHelperOutput) and the process's own region table: /proc/PID/maps read
// while the process was stopped, or the core's PT_LOAD segments and NT_FILE
// note (CoreFileParser).
//
//   RuntimeTable t = RuntimeTableBuilder::Build(helper_output, os_table);
//   std::string text = MaddressTableWriter::Write(t.rows, comments);
//
// Rules, as SOS `!maddress` tags the debugger's regions with ClrMD's ranges
// (dotnet/diagnostics NativeAddressHelper.cs):
//   - Each row is a runtime range cut at the OS table's region bounds, with
//     the OS region's state (MEM_COMMIT where the table counts it committed,
//     else MEM_RESERVE: a PROT_NONE reservation), type (MEM_MAPPED for a
//     file or shared mapping, else MEM_PRIVATE) and protection (PAGE_*).
//   - Image rows are the image's own mappings: every OS region of the same
//     file (path, or path + " (deleted)"), whatever ClrMD's size says. ClrMD
//     sizes a module by its PE image, but .NET maps a framework .dll flat, at
//     its file size: the rest of ClrMD's range can be a neighbour's pages (a
//     malloc'd block), which the table must not claim; and a ReadyToRun .dll
//     is mapped a second time, section by section, where ClrMD's range does
//     not reach. An image with no mapping of its file is left out.
//   - Runtime ranges are placed smallest first, each only where no image or
//     smaller range is (GC free regions and the handle table lie inside the
//     GC's bookkeeping reservation): rows never overlap.
//   - A part of a runtime range in no OS region: left out for a live process
//     (not mapped); listed as MEM_RESERVE for a core, which has no segment
//     for PROT_NONE memory (createdump leaves it out).
// Rows are sorted by start.
#ifndef PAGEBLAME_REGIONS_RUNTIME_TABLE_BUILDER_H_
#define PAGEBLAME_REGIONS_RUNTIME_TABLE_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "processor/regions/clr_helper_output.h"
#include "processor/regions/region.h"

namespace pageblame::regions {

struct RuntimeRow {
  uint64_t start = 0, end = 0;  // [start, end)
  std::string kind;             // maddress's "Memory Kind": GCHeap, Image, LoaderCodeHeap, ...
  std::string type, state, protect;  // MEM_IMAGE / MEM_COMMIT / PAGE_READWRITE, ...
  std::string image;            // the module's path, for Image rows
  std::string detail;           // what ClrMD adds: "Generation2", "Active", ...
};

struct RuntimeTable {
  std::vector<RuntimeRow> rows;
  uint64_t image_bytes_clipped = 0;   // bytes of ClrMD's image ranges outside the file's mappings
  int images_without_mapping = 0;     // images left out whole
  uint64_t unmapped_bytes = 0;        // live: runtime bytes in no mapping, left out
  uint64_t not_in_core_bytes = 0;     // core: runtime bytes in no segment, listed reserved
};

class RuntimeTableBuilder {
 public:
  static RuntimeTable Build(const ClrHelperOutput& clr, const RegionTable& os);
};

}  // namespace pageblame::regions

#endif  // PAGEBLAME_REGIONS_RUNTIME_TABLE_BUILDER_H_

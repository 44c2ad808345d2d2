// ClrHelperOutput: what tools/dotnet-regions (the ClrMD helper that
// `pageblame dotnet-regions` runs) printed about a core dump or a live .NET
// process, parsed. The protocol is the helper's (tools/dotnet-regions/
// Program.cs; change both together): tab-separated records, one a line,
// addresses in hex without 0x, END exclusive:
//
//   pageblame-dotnet-regions 1
//   target  core|pid  CORE-or-PID
//   runtime RUNTIME_MODULE  BUILD_ID  DAC  CLRMD_VERSION
//   range   START  END  KIND  DETAIL       (KIND: GCHeap, GCHeapReserve, LowFrequencyHeap, ...)
//   image   START  END  PATH
//   maps    LINE                           (live: /proc/PID/maps while the process was stopped)
//   warning TEXT
//   end     N                              (N = range + image records: the output is whole)
//
//   ASSIGN_OR_RETURN(ClrHelperOutput out, ClrHelperOutputParser::Parse(TextLines("helper", text)));
//   for (const ClrRange& r : out.ranges) ...
//
// Every record is checked: the first line, the field counts, addresses
// (START < END), one target and one runtime record, and the final `end`
// count (a helper killed midway leaves no `end`). Errors name the line.
#ifndef PAGEBLAME_REGIONS_CLR_HELPER_OUTPUT_H_
#define PAGEBLAME_REGIONS_CLR_HELPER_OUTPUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "processor/regions/text_lines.h"

namespace pageblame::regions {

// A range the runtime says it owns.
struct ClrRange {
  uint64_t start = 0, end = 0;  // [start, end)
  std::string kind;             // "GCHeap", "LoaderCodeHeap", ...
  std::string detail;           // "Generation2", "Active", ...
  int line = 0;
};

// A module's image as ClrMD sizes it (may run past the file's mappings).
struct ClrImage {
  uint64_t start = 0, end = 0;
  std::string path;
  int line = 0;
};

struct ClrHelperOutput {
  bool live = false;    // target pid (else core)
  std::string target;   // the core's path or the pid
  std::string runtime;  // the target's libcoreclr.so (or single-file host)
  std::string build_id, dac, clrmd_version;
  std::vector<ClrRange> ranges;
  std::vector<ClrImage> images;
  std::string maps;     // /proc/PID/maps lines, "\n"-terminated (live only)
  std::vector<std::string> warnings;
};

class ClrHelperOutputParser {
 public:
  static constexpr char kMagic[] = "pageblame-dotnet-regions 1";

  static absl::StatusOr<ClrHelperOutput> Parse(const TextLines& text);
};

}  // namespace pageblame::regions

#endif  // PAGEBLAME_REGIONS_CLR_HELPER_OUTPUT_H_

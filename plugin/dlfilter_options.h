// The plugin's --dlarg options, parsed and checked before any event is seen.
//
//   perf script --dlfilter pageblame-dlfilter.so --dlarg pages=0x7f3bad120000,7f3b`ad121000
//               --dlarg pid=6640 --dlarg summary=json
//
//   ASSIGN_OR_RETURN(DlfilterOptions o, ParseDlfilterArgs({"pages=0x7f3bad120000", "pid=6640"}));
//   // o.pages == {0x7f3bad120000}, o.pid == 6640, o.summary == Summary::kText
//
// Every argument is KEY=VALUE; keys: pages (comma-separated addresses, as the
// CLI accepts them: regions/address.h; may repeat), regions (a region table
// file in any format regions/region_table_reader.h detects; may repeat), pid,
// summary (text|json|none), trace (the perf.data to index, when perf script
// reads a pipe), at (the moment the summary answers for, as the CLI's --at:
// perf's seconds, +S, -S, end, peak; session/time_spec.h). An unknown key, an empty or malformed value is an
// InvalidArgument error naming the argument: the plugin prints it as one line
// and fails `start`.
#ifndef PAGEBLAME_PLUGIN_DLFILTER_OPTIONS_H_
#define PAGEBLAME_PLUGIN_DLFILTER_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "processor/session/time_spec.h"
#include "processor/regions/region.h"

namespace pageblame::plugin {

enum class Summary { kText, kJson, kNone };

// One region of a regions=FILE table, with where it came from.
struct RequestedRegion {
  uint64_t start = 0;
  uint64_t end = 0;  // exclusive
  std::string file;
  int line = 0;
};

struct DlfilterOptions {
  std::vector<uint64_t> pages;  // addresses as given (any address inside the page)
  std::vector<RequestedRegion> regions;
  std::optional<uint32_t> pid;
  Summary summary = Summary::kText;
  std::string trace;  // empty: the file perf script reads
  session::TimeSpec at;   // the summary's moment (default: the end)

  // No pages and no regions: keep every memory-syscall event.
  bool keep_all() const { return pages.empty() && regions.empty(); }
};

absl::StatusOr<DlfilterOptions> ParseDlfilterArgs(const std::vector<std::string>& args);

}  // namespace pageblame::plugin

#endif  // PAGEBLAME_PLUGIN_DLFILTER_OPTIONS_H_

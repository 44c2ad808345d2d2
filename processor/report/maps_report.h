// `pageblame maps`: the reconstructed address space of each process at a
// time, like /proc/PID/maps with an origin column.
//
//   MapsOptions o;  o.at = index::kLive;
//   WriteMapsJson(trace, o, stdout);    // [{"pid","start","end","prot","path","origin"}, ...]
//   std::string t = MapsText(trace, o);
#ifndef PAGEBLAME_REPORT_MAPS_REPORT_H_
#define PAGEBLAME_REPORT_MAPS_REPORT_H_

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "processor/replay/trace_loader.h"
#include "processor/report/origin_renderer.h"

namespace pageblame::report {

struct MapsOptions {
  std::optional<uint32_t> pid;
  uint64_t at = index::kLive;
};

// Process entries to report, by pid then age (several for a reused pid).
std::vector<uint32_t> SelectProcesses(const index::TraceIndex& idx, std::optional<uint32_t> pid);

// Writes the JSON array region by region, as Json::dump(1) of the whole array
// would (the same bytes), without holding it all: a DOM of a big address
// space's origins and stacks was 40 MB and a tenth of the run time. Returns
// false if writing failed.
bool WriteMapsJson(const replay::LoadedTrace& trace, const MapsOptions& options, std::FILE* out);
std::string MapsText(const replay::LoadedTrace& trace, const MapsOptions& options);

}  // namespace pageblame::report

#endif  // PAGEBLAME_REPORT_MAPS_REPORT_H_

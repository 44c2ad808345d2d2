// `pageblame maps`: the reconstructed address space of each process at a
// time, like /proc/PID/maps with an origin column.
//
//   MapsOptions o;  o.at = index::kLive;
//   Json j = MapsJson(trace, o);        // [{"pid","start","end","prot","path","origin"}, ...]
//   std::string t = MapsText(trace, o);
#ifndef PAGEBLAME_REPORT_MAPS_REPORT_H_
#define PAGEBLAME_REPORT_MAPS_REPORT_H_

#include <cstdint>
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

Json MapsJson(const replay::LoadedTrace& trace, const MapsOptions& options);
std::string MapsText(const replay::LoadedTrace& trace, const MapsOptions& options);

}  // namespace pageblame::report

#endif  // PAGEBLAME_REPORT_MAPS_REPORT_H_

// `pageblame maps`: the reconstructed address space of each process at a
// time, like /proc/PID/maps with an origin column.
//
//   MapsOptions o;  o.at = index::kEndOfTrace;
//   WriteMapsJson(trace, o, stdout);    // [{"pid","start","end","prot","path","rss","kind","origin","commit"}, ...]
//   std::string t = MapsText(trace, o);
#ifndef PAGEBLAME_RENDER_MAPS_REPORT_H_
#define PAGEBLAME_RENDER_MAPS_REPORT_H_

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "processor/analysis/region_kind.h"
#include "processor/render/origin_renderer.h"
#include "processor/replay/trace_loader.h"
#include "processor/residency/residency_index.h"

namespace pageblame::report {

struct MapsOptions {
  std::vector<uint32_t> processes;  // the process entries to show (session::ProcessesOf)
  uint64_t at = index::kEndOfTrace;
  // Text: one row per version instead of one per run the kernel would merge
  // (adjacent, same prot, same file or heap, or anonymous from one stack).
  // JSON always has one object per version.
  bool split = false;
  // Residency snapshots (null: none): JSON "rss" per region (null where
  // unknown), and a resident column in text when the trace has snapshots.
  const residency::ResidencyIndex* rss = nullptr;
  SummaryOptions frames;  // text: how each region's stack is said
  // Only regions of these kinds (region_kind.h); empty: all.
  std::vector<RegionKind> kinds;
};

// Writes the JSON array region by region, as Json::dump(1) of the whole array
// would (the same bytes), without holding it all: a DOM of a big address
// space's origins and stacks was 40 MB and a tenth of the run time. Returns
// false if writing failed.
bool WriteMapsJson(const replay::LoadedTrace& trace, const MapsOptions& options, std::FILE* out);
std::string MapsText(const replay::LoadedTrace& trace, const MapsOptions& options);

}  // namespace pageblame::report

#endif  // PAGEBLAME_RENDER_MAPS_REPORT_H_

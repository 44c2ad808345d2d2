// `pageblame maps`: the reconstructed address space of each process at a
// time (analysis/maps_answer.h), like /proc/PID/maps with an origin column.
//
//   MapsAnswer a = Maps(trace.index(), query);
//   WriteMapsJson(trace, a, stdout);    // [{"pid","start","end","prot","path","rss","kind","origin","commit"}, ...]
//   std::string t = MapsText(trace, a, frames);   // needs the query's runs
#ifndef PAGEBLAME_RENDER_MAPS_REPORT_H_
#define PAGEBLAME_RENDER_MAPS_REPORT_H_

#include <cstdio>
#include <string>

#include "processor/analysis/maps_answer.h"
#include "processor/render/origin_renderer.h"
#include "processor/session/session.h"

namespace pageblame::render {

// Writes the JSON array region by region, one object per version, as
// Json::dump(1) of the whole array would (the same bytes), without holding
// it all: a DOM of a big address space's origins and stacks was 40 MB and a
// tenth of the run time. "rss" is null where unknown. Returns false if
// writing failed.
bool WriteMapsJson(const session::Session& trace, const analysis::MapsAnswer& answer, std::FILE* out);
// One row per run (MapsQuery::runs: the kernel's merges, or with split one
// per version) with its kind and calls said by `frames`; a resident column
// when the trace has snapshots.
std::string MapsText(const session::Session& trace, const analysis::MapsAnswer& answer, const analysis::SummaryOptions& frames = {});

}  // namespace pageblame::render

#endif  // PAGEBLAME_RENDER_MAPS_REPORT_H_

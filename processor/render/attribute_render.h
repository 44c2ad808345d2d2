// Renders an Attribution (attribute_report.h) as the CLI contract's JSON and
// as text. The text starts with the answer: a table of the stacks ranked by
// committed bytes (kind, app frames), a total, and the PROT_NONE
// reservations apart; with TextOptions::detail, then per region who made its
// bytes, and every stack in full.
//
//   ASSIGN_OR_RETURN(Attribution a, Attribute(trace.index(), regions, options));
//   Json j = AttributeJson(trace, a);
//   // {"regions": [{"start","end","bytes","rss","kind","stacks":[{"bytes","rss","origin"}],
//   //               "before_trace_bytes","unmapped_bytes","table_rss"}],
//   //  "stacks": [{"bytes","committed_bytes","rss","regions","kind","table_rss","table_rss_partly","origin"}],
//   //  "rss", "rss_snapshot_time"}
//
// "rss" is resident bytes from the trace's residency snapshots (null where
// none read them); "table_rss" the table's own resident bytes (Region::rss;
// per stack exact for regions it made whole, "table_rss_partly" bounds the
// rest), null when the table has none.
//   std::string t = AttributeText(trace, a);
//
// Origins are OriginRenderer::OriginJson of the creating call (per region) or
// of the stack's earliest creating call (top level). Only printed stacks are
// symbolized.
#ifndef PAGEBLAME_RENDER_ATTRIBUTE_RENDER_H_
#define PAGEBLAME_RENDER_ATTRIBUTE_RENDER_H_

#include <string>

#include "processor/analysis/attribute_report.h"
#include "processor/render/origin_renderer.h"
#include "processor/render/text_options.h"
#include "processor/session/session.h"

namespace pageblame::render {

Json AttributeJson(const session::Session& trace, const analysis::Attribution& a);
std::string AttributeText(const session::Session& trace, const analysis::Attribution& a,
                          const TextOptions& options = {});

}  // namespace pageblame::render

#endif  // PAGEBLAME_RENDER_ATTRIBUTE_RENDER_H_

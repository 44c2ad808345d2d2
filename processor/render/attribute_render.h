// Renders an Attribution (attribute_report.h) as the CLI contract's JSON and
// as text. The text starts with the answer: a table of the application's
// methods (or, --group stack, of the stacks) ranked as the attribution is
// (kind, names, a total), and the PROT_NONE reservations apart; with
// TextOptions::detail, then per region who made its bytes, and every stack
// in full.
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
#include <vector>

#include "processor/analysis/attribute_report.h"
#include "processor/analysis/attribution_methods.h"
#include "processor/render/origin_renderer.h"
#include "processor/render/text_options.h"
#include "processor/session/session.h"

namespace pageblame::render {

Json AttributeJson(const session::Session& trace, const analysis::Attribution& a);
// The same with "methods" (what the CLI prints): the stacks grouped by the
// application method (analysis/attribution_methods.h), in their order:
//   "methods": [{"method", "app_frame", "context", "bytes", "committed_bytes", "rss", "regions",
//                "calls", "kind", "table_rss", "table_rss_partly", "stacks": [indexes into "stacks"]}]
// "method" is the name the text's row says, "app_frame" false for the
// stacks with no application frame (named by their innermost frames).
Json AttributeJson(const session::Session& trace, const analysis::Attribution& a,
                   const std::vector<analysis::MethodTotal>& methods);
// The first screen a row per stack (--group stack).
std::string AttributeText(const session::Session& trace, const analysis::Attribution& a,
                          const TextOptions& options = {});
// The first screen a row per method (the CLI's default): committed,
// resident, regions, calls, stacks, kind, the method whole and as much of
// its context as TextOptions::width leaves (0: all of it); reservations
// apart by method; with TextOptions::detail each method's stacks, then the
// regions and every stack as AttributeText's --detail.
std::string AttributeText(const session::Session& trace, const analysis::Attribution& a,
                          const std::vector<analysis::MethodTotal>& methods, const TextOptions& options = {});

}  // namespace pageblame::render

#endif  // PAGEBLAME_RENDER_ATTRIBUTE_RENDER_H_

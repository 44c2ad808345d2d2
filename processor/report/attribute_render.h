// Renders an Attribution (attribute_report.h) as the CLI contract's JSON and
// as text: per region a compact table of who made its bytes, then the unique
// call stacks ranked by total bytes, symbolized.
//
//   ASSIGN_OR_RETURN(Attribution a, Attribute(trace.index(), regions, options));
//   Json j = AttributeJson(trace, a);
//   // {"regions": [{"start","end","bytes","stacks":[{"bytes","origin"}],
//   //               "before_trace_bytes","unmapped_bytes","table_rss"}],
//   //  "stacks": [{"bytes","regions","table_rss","table_rss_partly","origin"}]}
//
// "table_rss" is the table's resident bytes (Region::rss; per stack exact
// for regions it made whole, "table_rss_partly" bounds the rest), null when
// the table has none.
//   std::string t = AttributeText(trace, a);
//
// Origins are OriginRenderer::OriginJson of the creating call (per region) or
// of the stack's earliest creating call (top level). Only printed stacks are
// symbolized.
#ifndef PAGEBLAME_REPORT_ATTRIBUTE_RENDER_H_
#define PAGEBLAME_REPORT_ATTRIBUTE_RENDER_H_

#include <string>

#include "processor/replay/trace_loader.h"
#include "processor/report/attribute_report.h"
#include "processor/report/origin_renderer.h"

namespace pageblame::report {

Json AttributeJson(const replay::LoadedTrace& trace, const Attribution& a);
std::string AttributeText(const replay::LoadedTrace& trace, const Attribution& a,
                          SummaryStyle frames = SummaryStyle::kApp);

}  // namespace pageblame::report

#endif  // PAGEBLAME_REPORT_ATTRIBUTE_RENDER_H_

// The offline HTML report: one self-contained file, the page's CSS and
// script inline (processor/render/html/, built into the binary) and the
// data (report_data.h) as JSON in a <script type="application/json">, so
// nothing is fetched when it is opened, from disk or as an attachment.
//
//   std::string html = HtmlPage(ReportData(trace, options));
#ifndef PAGEBLAME_RENDER_HTML_PAGE_H_
#define PAGEBLAME_RENDER_HTML_PAGE_H_

#include <string>

#include "processor/render/origin_renderer.h"

namespace pageblame::render {

std::string HtmlPage(const Json& data);

}  // namespace pageblame::render

#endif  // PAGEBLAME_RENDER_HTML_PAGE_H_

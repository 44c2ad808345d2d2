#include "processor/render/html_page.h"

#include <cstddef>
#include "absl/strings/string_view.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace pageblame::render {
namespace assets {
// processor/render/html/, embedded at build time (embed.cmake).
extern const char kReportHtml[];
extern const size_t kReportHtmlSize;
extern const char kReportCss[];
extern const size_t kReportCssSize;
extern const char kReportJs[];
extern const size_t kReportJsSize;
}  // namespace assets

namespace {

absl::string_view Asset(const char* data, size_t size) { return absl::string_view(data, size); }

// JSON inside <script>: a "</script>" or "<!--" in a string (a path, a
// symbol) must not end or change the script element, so every '<' (only
// ever inside a JSON string) is written as the escape \u003c.
std::string ScriptSafeJson(const Json& data) {
  const std::string compact = data.dump(-1, ' ', false, Json::error_handler_t::replace);
  return absl::StrReplaceAll(compact, {{"<", "\\u003c"}});
}

}  // namespace

std::string HtmlPage(const Json& data) {
  const std::string css = absl::StrCat("<style>\n", Asset(assets::kReportCss, assets::kReportCssSize), "</style>");
  const std::string js = absl::StrCat("<script>\n", Asset(assets::kReportJs, assets::kReportJsSize), "</script>");
  return absl::StrReplaceAll(Asset(assets::kReportHtml, assets::kReportHtmlSize),
                             {{"<!--PAGEBLAME:CSS-->", css},
                              {"<!--PAGEBLAME:JS-->", js},
                              {"<!--PAGEBLAME:DATA-->", ScriptSafeJson(data)}});
}

}  // namespace pageblame::render

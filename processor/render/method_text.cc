#include "processor/render/method_text.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "processor/base/text_escape.h"
#include "processor/render/text_table.h"

namespace pageblame::render {
namespace {

std::string Said(const analysis::AppMethod& m, const char* between) {
  // Without an app frame the name is frames, innermost first: the first
  // one is kept whole, each next one a part of its own.
  std::string out = m.app ? EscapeName(m.name)
                          : absl::StrCat("(no app frame) ",
                                         absl::StrReplaceAll(EscapeName(m.name), {{" <- ", absl::StrCat(between, " <- ")}}));
  for (const std::string& c : m.context) absl::StrAppend(&out, between, " -> ", EscapeName(c));
  return out;
}

}  // namespace

std::string MethodCell(const analysis::AppMethod& m) { return Said(m, kPartBreak); }

std::string MethodLine(const analysis::AppMethod& m) { return Said(m, ""); }

std::string MoreMethodsLine(size_t more, bool detail) {
  if (more == 0) return "";
  return absl::StrCat("  ... ", more, more == 1 ? " more method" : " more methods", " with committed bytes",
                      detail ? " (all below)" : " (--detail lists each method's stacks)", "\n");
}

}  // namespace pageblame::render

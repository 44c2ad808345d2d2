#include "processor/render/json_stream.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace pageblame::render {
namespace {

// DumpJson's layout (an indent of one space a level): `value` dumped as it
// is nested `depth` levels deep, i.e. each line after its first indented by
// `depth` more. A JSON text has no newline inside a string (escaped), so
// every newline is one of the layout's.
std::string Nested(const Json& value, size_t depth) {
  return absl::StrReplaceAll(DumpJson(value), {{"\n", absl::StrCat("\n", std::string(depth, ' '))}});
}

bool Put(std::string_view text, std::FILE* out) { return std::fwrite(text.data(), 1, text.size(), out) == text.size(); }

}  // namespace

bool WriteJsonStreamed(const Json& root, std::string_view streamed, size_t count,
                       absl::FunctionRef<Json(size_t)> element, std::FILE* out) {
  if (root.empty()) return Put("{}\n", out);
  bool ok = Put("{", out);
  bool first = true;
  for (const auto& [key, value] : root.items()) {
    ok &= Put(absl::StrCat(first ? "\n " : ",\n ", DumpJson(Json(key)), ": "), out);
    first = false;
    if (key != streamed || count == 0) {
      ok &= Put(Nested(value, 1), out);
      continue;
    }
    for (size_t i = 0; i < count && ok; ++i) ok &= Put(absl::StrCat(i == 0 ? "[\n  " : ",\n  ", Nested(element(i), 2)), out);
    ok &= Put("\n ]", out);
  }
  return ok && Put("\n}\n", out);
}

}  // namespace pageblame::render

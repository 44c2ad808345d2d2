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

// A non-empty array nested `depth` levels deep, as Nested() would write it.
bool PutElements(size_t count, absl::FunctionRef<Json(size_t)> element, size_t depth, std::FILE* out) {
  if (count == 0) return Put("[]", out);
  const std::string indent(depth + 1, ' ');
  bool ok = true;
  for (size_t i = 0; i < count && ok; ++i) {
    ok &= Put(absl::StrCat(i == 0 ? "[\n" : ",\n", indent, Nested(element(i), depth + 1)), out);
  }
  return ok && Put(absl::StrCat("\n", std::string(depth, ' '), "]"), out);
}

}  // namespace

bool WriteJsonStreamed(const Json& root, std::string_view streamed, size_t count,
                       absl::FunctionRef<Json(size_t)> element, std::FILE* out) {
  if (root.empty()) return Put("{}\n", out);
  bool ok = Put("{", out);
  bool first = true;
  for (const auto& [key, value] : root.items()) {
    ok &= Put(absl::StrCat(first ? "\n " : ",\n ", DumpJson(Json(key)), ": "), out);
    first = false;
    if (key != streamed) {
      ok &= Put(Nested(value, 1), out);
      continue;
    }
    ok &= PutElements(count, element, 1, out);
  }
  return ok && Put("\n}\n", out);
}

bool WriteJsonArrayStreamed(size_t count, absl::FunctionRef<Json(size_t)> element, std::FILE* out) {
  return PutElements(count, element, 0, out) && Put("\n", out);
}

}  // namespace pageblame::render

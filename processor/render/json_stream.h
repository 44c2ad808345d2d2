// WriteJsonStreamed: an object written as DumpJson writes it, byte for
// byte, but with one of its arrays made and written an element at a time,
// so that an answer with a million rows (`growth --json` of a JIT-heavy
// recording: ~3 KB of JSON a stack) is never held whole, as a document or
// as text. WriteJsonArrayStreamed does the same for a top-level array.
//
//   Json root = ...;                       // its keys in order, "stacks": [] among them
//   WriteJsonStreamed(root, "stacks", g.stacks.size(),
//                     [&](size_t i) { return StackJson(g.stacks[i]); }, out);
#ifndef PAGEBLAME_RENDER_JSON_STREAM_H_
#define PAGEBLAME_RENDER_JSON_STREAM_H_

#include <cstdio>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "processor/render/origin_renderer.h"

namespace pageblame::render {

// `root` (an object) to `out` as DumpJson(root) + "\n" would be, the value
// of its key `streamed` (an empty array in `root`, which fixes its place)
// being the `count` elements `element` makes, in order. False when a write
// failed.
bool WriteJsonStreamed(const Json& root, std::string_view streamed, size_t count,
                       absl::FunctionRef<Json(size_t)> element, std::FILE* out);
// An array of the `count` elements `element` makes, to `out` as
// DumpJson(array) + "\n" would be (`query --json`: a .NET GC page's history
// alone can be megabytes). False when a write failed.
bool WriteJsonArrayStreamed(size_t count, absl::FunctionRef<Json(size_t)> element, std::FILE* out);

}  // namespace pageblame::render

#endif  // PAGEBLAME_RENDER_JSON_STREAM_H_

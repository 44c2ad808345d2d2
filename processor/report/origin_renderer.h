// Renders the creating call of a region (its "origin") and call stacks, for
// text and JSON. Stacks are symbolized here, lazily: only the stacks that are
// printed, each frame answer cached by the symbolizer.
//
//   OriginRenderer r(trace.index(), trace.symbolizer());
//   nlohmann::ordered_json j = r.OriginJson(version.origin);   // null if before trace
//   std::string text = r.StackText(event, "    ");
#ifndef PAGEBLAME_REPORT_ORIGIN_RENDERER_H_
#define PAGEBLAME_REPORT_ORIGIN_RENDERER_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"

#include <nlohmann/json.hpp>

#include "processor/index/trace_index.h"
#include "processor/symbols/symbolizer.h"

namespace pageblame::report {

using Json = nlohmann::ordered_json;

// j.dump(1), the layout of every JSON answer. Bytes that are not UTF-8 (a
// path or comm can hold any bytes on Linux) come out as U+FFFD instead of
// aborting the whole answer (nlohmann's default throws).
inline std::string DumpJson(const Json& j) {
  return j.dump(1, ' ', false, Json::error_handler_t::replace);
}

class OriginRenderer {
 public:
  OriginRenderer(const index::TraceIndex& idx, symbols::Symbolizer& sym) : idx_(idx), sym_(sym) {}

  // User frames of the event's stack, leaf first, symbolized.
  std::vector<symbols::Frame> Frames(const index::CallEvent& ev);
  // {"syscall","time","pid","tid","comm","stack":[{"ip","symbol","dso"}]}, or null.
  Json OriginJson(EventId ev);
  Json StackJson(const index::CallEvent& ev);
  // For writers of many origins (maps --json): OriginJson with "stack" set
  // to kStackMarker, and the text to put in its place: StackJson(ev).dump(1)
  // with `indent` spaces after each newline. The text is made once per stack
  // (and kept while its frames symbolize the same): building and dumping a
  // 30-frame DOM per region was most of the cost of printing a big map.
  static constexpr std::string_view kStackMarker = "\x01pageblame-stack\x01";
  Json OriginJsonStackMarked(EventId ev);
  const std::string& StackJsonText(const index::CallEvent& ev, int indent);
  // "    #0 0x7f.. __mmap+0x23 (/usr/lib/.../libc.so.6)\n..." one frame a line.
  std::string StackText(const index::CallEvent& ev, const std::string& indent);
  // "mmap(...) = 0x.. at 216.083882 by scenarios 6640/6640"
  std::string CallText(const index::CallEvent& ev);
  // The first few symbol names, leaf first ("__mmap <- do_mmap_anon <- main").
  std::string ShortStack(const index::CallEvent& ev, size_t max_frames);

 private:
  // OriginJson's fields before "stack".
  Json OriginFields(const index::CallEvent& ev);
  static Json FramesJson(const std::vector<symbols::Frame>& frames);

  const index::TraceIndex& idx_;
  symbols::Symbolizer& sym_;
  struct CachedStack {
    std::vector<symbols::Frame> frames;
    int indent;
    std::string text;
  };
  absl::flat_hash_map<uint32_t, CachedStack> stack_text_;  // by StackId
};

}  // namespace pageblame::report

#endif  // PAGEBLAME_REPORT_ORIGIN_RENDERER_H_

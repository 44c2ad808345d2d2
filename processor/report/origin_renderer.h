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
#include <vector>

#include <nlohmann/json.hpp>

#include "processor/index/trace_index.h"
#include "processor/symbols/symbolizer.h"

namespace pageblame::report {

using Json = nlohmann::ordered_json;

class OriginRenderer {
 public:
  OriginRenderer(const index::TraceIndex& idx, symbols::Symbolizer& sym) : idx_(idx), sym_(sym) {}

  // User frames of the event's stack, leaf first, symbolized.
  std::vector<symbols::Frame> Frames(const index::CallEvent& ev);
  // {"syscall","time","pid","tid","comm","stack":[{"ip","symbol","dso"}]}, or null.
  Json OriginJson(EventId ev);
  Json StackJson(const index::CallEvent& ev);
  // "    #0 0x7f.. __mmap+0x23 (/usr/lib/.../libc.so.6)\n..." one frame a line.
  std::string StackText(const index::CallEvent& ev, const std::string& indent);
  // "mmap(...) = 0x.. at 216.083882 by scenarios 6640/6640"
  std::string CallText(const index::CallEvent& ev);
  // The first few symbol names, leaf first ("__mmap <- do_mmap_anon <- main").
  std::string ShortStack(const index::CallEvent& ev, size_t max_frames);

 private:
  const index::TraceIndex& idx_;
  symbols::Symbolizer& sym_;
};

}  // namespace pageblame::report

#endif  // PAGEBLAME_REPORT_ORIGIN_RENDERER_H_

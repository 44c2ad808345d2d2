// Renders the creating call of a region (its "origin") and call stacks, for
// text and JSON. Stacks are symbolized here, lazily: only the stacks that are
// printed, each frame answer cached by the symbolizer. JSON carries names
// (symbols, DSO paths, comms) as they are; text says them through
// EscapeName (base/text_escape.h): a JIT method named "\x1b[2J" must not
// clear the terminal of root running pageblame, nor a "\n" forge a line.
//
//   OriginRenderer r(session.frames());   // symbolized once per command (session/stack_frames.h)
//   nlohmann::ordered_json j = r.OriginJson(version.origin);   // null if before trace
//   std::string text = r.StackText(event, "    ");
#ifndef PAGEBLAME_RENDER_ORIGIN_RENDERER_H_
#define PAGEBLAME_RENDER_ORIGIN_RENDERER_H_

#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/container/flat_hash_map.h"

#include "processor/analysis/app_frames.h"
#include "processor/index/trace_index.h"
#include "processor/session/stack_frames.h"
#include "processor/symbols/symbolizer.h"

namespace pageblame::render {

using Json = nlohmann::ordered_json;

// j.dump(1), the layout of every JSON answer. Bytes that are not UTF-8 (a
// path or comm can hold any bytes on Linux) come out as U+FFFD instead of
// aborting the whole answer (nlohmann's default throws). DEL and the C1
// controls (U+0080-U+009F), which nlohmann writes as they are and a
// terminal obeys (U+009B is CSI), are written as \u escapes: the same
// strings to a JSON reader, inert on a terminal (JsonControlsEscaped).
std::string DumpJson(const Json& j);
// `json` (JSON text) with DEL and the UTF-8 of U+0080-U+009F as \u007f,
// \u0080..\u009f. Both can only be inside strings, where \u escapes mean
// the same characters.
std::string JsonControlsEscaped(std::string json);
// Appends s as DumpJson writes a JSON string: quoted, escaped, bytes that
// are not UTF-8 replaced. Plain printable ASCII, the usual case, is copied.
void AppendJsonString(std::string* out, std::string_view s);

// A frame's name as the text answers print it: the symbol, "name
// (inlined)" for an inlined frame (as perf script), the hex ip if unnamed;
// escaped (EscapeName).
std::string DisplayName(const symbols::Frame& f);

class OriginRenderer {
 public:
  explicit OriginRenderer(session::StackFrames& frames, analysis::SummaryOptions summary = {})
      : frames_(frames), idx_(frames.index()), sym_(frames.symbolizer()), summary_(std::move(summary)) {}

  // User frames of the event's stack, leaf first, symbolized (the
  // session's cache). Valid until the next call.
  const std::vector<symbols::Frame>& Frames(const index::CallEvent& ev) { return frames_.Frames(ev); }
  // {"syscall","time","pid","tid","comm","stack":[{"ip","symbol","dso"}]}, or null;
  // an inlined frame has "inlined": true as well.
  Json OriginJson(EventId ev);
  Json StackJson(const index::CallEvent& ev);
  // For writers of many origins (maps --json): DumpJson(OriginJson(ev)) as
  // text made directly, with `indent` more spaces after each newline (where
  // it sits in the caller's document). Building and dumping a DOM of 30-odd
  // frames per region was most of the cost of printing a big map.
  void AppendOriginJson(std::string* out, EventId ev, int indent);
  // "    #0 0x7f.. __mmap+0x23 (/usr/lib/.../libc.so.6)\n..." one frame a line;
  // this and the text below say names escaped (EscapeName).
  std::string StackText(const index::CallEvent& ev, const std::string& indent);
  // "mmap(...) = 0x.. at 216.083882 by scenarios 6640/6640"
  std::string CallText(const index::CallEvent& ev);
  // The application's frames, leaf first, with the allocator entry it called
  // (app_frames.h: "malloc <- FillCache <- Main"); the first few frames if
  // none is the application's, or with SummaryStyle::kAll; frames --hide
  // matches left out.
  std::string ShortStack(const index::CallEvent& ev, size_t max_frames);

 private:
  // What is printed of a stack, made from its frames once (while they are
  // the same: StackFrames::Stack::serial).
  struct Printed {
    uint64_t serial = 0;
    std::optional<size_t> first_app;  // FirstAppFrame(frames)
    std::string json_nl;  // StackJsonText's text, if made, and its nl
    std::string json;
  };
  Printed& PrintedOf(const index::CallEvent& ev);
  // The stack's "stack" array for AppendOriginJson in `json` (`nl` being a
  // newline and the indent).
  const Printed& StackJsonText(const index::CallEvent& ev, const std::string& nl);

  session::StackFrames& frames_;
  const index::TraceIndex& idx_;
  symbols::Symbolizer& sym_;
  analysis::SummaryOptions summary_;
  // By (StackId, pid), as StackFrames keeps them: at most
  // StackFrames::kMaxStacks (then started again).
  absl::flat_hash_map<std::pair<uint32_t, uint32_t>, Printed> printed_;
  // One frame's object in StackJsonText, by (pid, FrameKey, ip, nl): the
  // same pid, ip and key give the same frame (Symbolizer::FrameKey), and
  // stacks share most of their frames (the bench trace's 752 stacks have
  // ~19 k frames, a few hundred distinct).
  using FrameJsonKey = std::tuple<uint32_t, const void*, uint64_t, uint32_t, std::string>;
  absl::flat_hash_map<FrameJsonKey, std::string> frame_json_;
};

}  // namespace pageblame::render

#endif  // PAGEBLAME_RENDER_ORIGIN_RENDERER_H_

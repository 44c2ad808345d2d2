// Renders the creating call of a region (its "origin") and call stacks, for
// text and JSON. Stacks are symbolized here, lazily: only the stacks that are
// printed, each frame answer cached by the symbolizer. JSON carries names
// (symbols, DSO paths, comms) as they are; text says them through
// EscapeName (base/text_escape.h): a JIT method named "\x1b[2J" must not
// clear the terminal of root running pageblame, nor a "\n" forge a line.
//
//   OriginRenderer r(trace.index(), trace.symbolizer());
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
#include "processor/analysis/frame_source.h"
#include "processor/index/trace_index.h"
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

// The frames of ips[i] of call `ev`'s stack, appended to `out`: its own,
// after the functions inlined there when `inlines` (unwound stacks only:
// perf shows inlined frames for DWARF-unwound stacks, not for the
// kernel's frame-pointer chains, and fp traces print as they always did).
void AppendFrames(symbols::Symbolizer& sym, const index::CallEvent& ev,
                  absl::Span<const uint64_t> ips, size_t i, bool inlines,
                  std::vector<symbols::Frame>* out);

// A frame's name as the text answers print it: the symbol, "name
// (inlined)" for an inlined frame (as perf script), the hex ip if unnamed;
// escaped (EscapeName).
std::string DisplayName(const symbols::Frame& f);

class OriginRenderer : public analysis::FrameSource {
 public:
  OriginRenderer(const index::TraceIndex& idx, symbols::Symbolizer& sym, analysis::SummaryOptions summary = {})
      : idx_(idx), sym_(sym), summary_(std::move(summary)) {}

  // User frames of the event's stack, leaf first, symbolized. Kept per
  // stack and process, and reused while every frame's mapping is the same
  // (checking that is a lookup per frame; symbolizing them again for each
  // region was most of the time of printing a big map or attribution).
  // Valid until the next call.
  const std::vector<symbols::Frame>& Frames(const index::CallEvent& ev) override;
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
  struct CachedStack;
  // The cached stack, with its "stack" array for AppendOriginJson in `json`
  // (`nl` being a newline and the indent); made once per cached frames.
  const CachedStack& StackJsonText(const index::CallEvent& ev, const std::string& nl);

  const index::TraceIndex& idx_;
  symbols::Symbolizer& sym_;
  analysis::SummaryOptions summary_;
  struct CachedStack {
    std::vector<const void*> keys;  // Symbolizer::FrameKey of each ip
    // Leaf first; an ip's inlined frames come before its own frame.
    std::vector<symbols::Frame> frames;
    // Per frame: its ip's key, and where it is among that ip's frames
    // (2 * index, + 1 for a return address) for the frame_json_ cache.
    std::vector<const void*> frame_keys;
    std::vector<uint32_t> frame_parts;
    std::string json_nl;  // StackJsonText's text, if made, and its nl
    std::string json;
    std::optional<size_t> first_app;  // FirstAppFrame(frames)
  };
  // By (StackId, pid): the same stack can symbolize differently in another
  // process, or after a library was mapped elsewhere (then the keys differ).
  CachedStack& Cached(const index::CallEvent& ev);
  absl::flat_hash_map<std::pair<uint32_t, uint32_t>, CachedStack> stacks_;
  std::vector<const void*> keys_;  // scratch
  // One frame's object in StackJsonText, by (pid, FrameKey, ip, nl): the
  // same pid, ip and key give the same frame (Symbolizer::FrameKey), and
  // stacks share most of their frames (the bench trace's 752 stacks have
  // ~19 k frames, a few hundred distinct).
  using FrameJsonKey = std::tuple<uint32_t, const void*, uint64_t, uint32_t, std::string>;
  absl::flat_hash_map<FrameJsonKey, std::string> frame_json_;
};

}  // namespace pageblame::render

#endif  // PAGEBLAME_RENDER_ORIGIN_RENDERER_H_

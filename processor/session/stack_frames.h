// StackFrames: the symbolized frames of a loaded recording's call stacks,
// made on first use and kept per stack and process, one cache for every
// analysis and renderer of a command (Session::frames()): what is
// classified (analysis/kind_classifier.h) and what is printed
// (render/origin_renderer.h) are the same frames, looked up once.
//
//   StackFrames& frames = session.frames();
//   for (const symbols::Frame& f : frames.Frames(idx.event(id))) ...
//
// An entry is reused while every frame's mapping is the same (a lookup per
// frame, Symbolizer::FrameKey): the same stack symbolizes differently in
// another process, or after a library was mapped elsewhere. Symbolizing
// stacks again for each region was most of the time of printing a big map
// or attribution. The cache keeps at most kMaxStacks stacks (then starts
// again), so its memory does not grow with a recording's distinct stacks.
#ifndef PAGEBLAME_SESSION_STACK_FRAMES_H_
#define PAGEBLAME_SESSION_STACK_FRAMES_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "processor/index/trace_index.h"
#include "processor/symbols/symbolizer.h"

namespace pageblame::session {

// The frames of ips[i] of call `ev`'s stack, appended to `out`: its own,
// after the functions inlined there when `inlines` (unwound stacks only:
// perf shows inlined frames for DWARF-unwound stacks, not for the
// kernel's frame-pointer chains, and fp traces print as they always did).
void AppendFrames(symbols::Symbolizer& sym, const index::CallEvent& ev, absl::Span<const uint64_t> ips, size_t i,
                  bool inlines, std::vector<symbols::Frame>* out);

class StackFrames {
 public:
  struct Stack {
    std::vector<const void*> keys;  // Symbolizer::FrameKey of each ip
    // Leaf first; an ip's inlined frames come before its own frame.
    std::vector<symbols::Frame> frames;
    // Per frame: its ip's key, and where it is among that ip's frames
    // (2 * index, + 1 for a return address): with the pid and ip, what
    // makes two frames the same (for caches of their printed forms).
    std::vector<const void*> frame_keys;
    std::vector<uint32_t> frame_parts;
    // Changes each time `frames` is made again: what is derived from
    // them is stale when this differs.
    uint64_t serial = 0;
  };

  // The most (stack, process) entries kept: ~100 B a frame, so 16 Ki
  // stacks of 30 frames are ~50 MB at most.
  static constexpr size_t kMaxStacks = 16 << 10;

  StackFrames(const index::TraceIndex& idx, symbols::Symbolizer& sym) : idx_(idx), sym_(sym) {}
  StackFrames(const StackFrames&) = delete;
  StackFrames& operator=(const StackFrames&) = delete;

  // The event's stack, symbolized. Valid until the next call.
  const Stack& Of(const index::CallEvent& ev);
  // User frames of the event's stack, leaf first. Valid until the next call.
  const std::vector<symbols::Frame>& Frames(const index::CallEvent& ev) { return Of(ev).frames; }

  const index::TraceIndex& index() const { return idx_; }
  symbols::Symbolizer& symbolizer() const { return sym_; }
  // Entries kept now (at most kMaxStacks).
  size_t cached() const { return stacks_.size(); }

 private:
  const index::TraceIndex& idx_;
  symbols::Symbolizer& sym_;
  // By (StackId, pid), at most kMaxStacks.
  absl::flat_hash_map<std::pair<uint32_t, uint32_t>, Stack> stacks_;
  std::vector<const void*> keys_;  // scratch
  std::vector<uint64_t> ips_;      // scratch: the stack's ips
  uint64_t serial_ = 0;
};

}  // namespace pageblame::session

#endif  // PAGEBLAME_SESSION_STACK_FRAMES_H_

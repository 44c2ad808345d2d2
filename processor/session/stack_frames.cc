#include "processor/session/stack_frames.h"

namespace pageblame::session {

void AppendFrames(symbols::Symbolizer& sym, const index::CallEvent& ev, absl::Span<const uint64_t> ips, size_t i,
                  bool inlines, std::vector<symbols::Frame>* out) {
  if (!inlines) {
    out->push_back(sym.Symbolize(ev.pid, ev.time, ips[i]));
    return;
  }
  // Every ip but the leaf is a return address: its inlined calls are
  // found at ip - 1.
  sym.SymbolizeInlined(ev.pid, ev.time, ips[i], /*return_address=*/i > 0, out);
}

const StackFrames::Stack& StackFrames::Of(const index::CallEvent& ev) {
  keys_.clear();
  ips_.clear();
  idx_.stacks().AppendIps(ev.stack, &ips_);
  const absl::Span<const uint64_t> ips = ips_;
  for (size_t i = 0; i < ips.size(); ++i) {
    // A recursive frame repeats the ip before it: same pid, time and ip, same
    // key, without the lookup (half the frames of some stacks).
    keys_.push_back(i > 0 && ips[i] == ips[i - 1] ? keys_.back() : sym_.FrameKey(ev.pid, ev.time, ips[i]));
  }
  const std::pair<uint32_t, uint32_t> key(ev.stack.value(), ev.pid);
  // Bounded: a symbolized stack is ~100 B a frame with its names, and a
  // command that names every stack of a recording with millions of them
  // (growth's methods) would keep them all. Past kMaxStacks the cache
  // starts again; the frames made again get a new serial, so what was
  // derived from them is made again too (same frames, same answers).
  if (stacks_.size() >= kMaxStacks && !stacks_.contains(key)) stacks_.clear();
  auto [it, inserted] = stacks_.try_emplace(key);
  Stack& c = it->second;
  if (!inserted && c.keys == keys_) return c;
  c.keys = keys_;
  c.frames.clear();
  c.frame_keys.clear();
  c.frame_parts.clear();
  const bool inlines = idx_.stacks().Unwound(ev.stack);
  for (size_t i = 0; i < ips.size(); ++i) {
    const size_t before = c.frames.size();
    AppendFrames(sym_, ev, ips, i, inlines, &c.frames);
    for (size_t k = before; k < c.frames.size(); ++k) {
      c.frame_keys.push_back(keys_[i]);
      c.frame_parts.push_back(static_cast<uint32_t>(2 * (k - before) + (i > 0)));
    }
  }
  c.serial = ++serial_;
  return c;
}

}  // namespace pageblame::session

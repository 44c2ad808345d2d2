// Folded stacks: the flame-graph input that flamegraph.pl, inferno
// (inferno-flamegraph) and speedscope read, with bytes as the count. One line
// per unique stack, frames root first joined by ';', a space, the bytes:
//
//   _start;__libc_start_main;main;do_mmap_anon;__mmap 1048576
//   [before trace] 188416
//   [not mapped] 8192
//
//   std::string folded = FoldedStacks(trace, attribution);
//
// A frame is its symbol, else "[dso+0xOFFSET]" (dso base name, file offset
// from the index's file mapping holding the ip at the call's time:
// analysis/file_offset.h), else
// "[dso]" when that mapping is unknown, else "0xIP". Names are escaped as in
// all text (base/text_escape.h: a line break is "\x0a", ESC "\x1b") and ';'
// inside a name becomes ':', so every line splits back into frames.
// Stacks that render to the same frames (different ips, same functions) are
// merged. A call recorded without a user stack is the single frame
// "[no user stack]". The before-trace and not-mapped lines appear only when
// non-zero. The counts add up to Attribution::bytes. Order: bytes descending,
// then the text.
#ifndef PAGEBLAME_RENDER_FOLDED_STACKS_H_
#define PAGEBLAME_RENDER_FOLDED_STACKS_H_

#include <string>

#include "processor/analysis/attribute_report.h"
#include "processor/render/origin_renderer.h"
#include "processor/session/session.h"

namespace pageblame::render {

std::string FoldedStacks(const session::Session& trace, const analysis::Attribution& a);
// The frames of one call's stack as FoldedStacks writes them: root first,
// joined by ';' ("[no user stack]" for a call without one). `growth
// --format folded` and the HTML report name stacks the same way.
std::string FoldedFrames(const index::TraceIndex& idx, OriginRenderer& r, EventId call);
// One frame of `ev`'s stack as FoldedFrames names it.
std::string FoldedFrameName(const index::TraceIndex& idx, const index::CallEvent& ev,
                            const symbols::Frame& f);

}  // namespace pageblame::render

#endif  // PAGEBLAME_RENDER_FOLDED_STACKS_H_

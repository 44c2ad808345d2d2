// Whether a frame-pointer trace lost the callers of libc: on distributions
// whose libc is built without frame pointers (Debian 12, Ubuntu before
// 24.04, RHEL 8/9), a --call-graph fp chain taken in libc's mmap() wrapper
// stops there or a few libc frames up, and the answer names no function of
// the program. This finds such stacks so the CLI can say once what to
// record instead (--call-graph dwarf on the enter events).
//
//   LibcCut cut = FindLibcCut(idx, symbolizer);
//   if (cut.Mostly()) say(LibcCutHint(cut));   // load_warnings.h
//
// A stack is cut when its outermost frame is in libc and is not where a
// process or thread begins (__libc_start_call_main, start_thread, clone3).
// Two symbol lookups (outermost and leaf) per unique stack, one array read
// per call. An outermost libc frame without a name is not judged cut.
#ifndef PAGEBLAME_SESSION_LIBC_CUT_H_
#define PAGEBLAME_SESSION_LIBC_CUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "processor/index/trace_index.h"
#include "processor/symbols/symbolizer.h"

namespace pageblame::session {

struct LibcCut {
  uint64_t calls = 0;  // calls with a user stack
  uint64_t cut = 0;    // of which the stack stops inside libc
  std::vector<std::string> leaves;  // the cut stacks' leaf functions, most calls first (up to 3)
  // More than half the calls with a stack lost their caller.
  bool Mostly() const { return calls > 0 && 2 * cut > calls; }
};

LibcCut FindLibcCut(const index::TraceIndex& idx, symbols::Symbolizer& sym);

// The one-paragraph note ("note: ...", one line) the front ends print on
// stderr: what happened and the recording that fixes it.
std::string LibcCutHint(const LibcCut& cut);

}  // namespace pageblame::session

#endif  // PAGEBLAME_SESSION_LIBC_CUT_H_

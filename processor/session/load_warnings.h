// What a loaded trace's answers cannot be trusted for, as lines to say to
// the user before the answer (each "warning: ..." or "note: ...", without
// the front end's prefix or a newline). Every front end says the same:
//   - a 32-bit program, whose calls are not replayed;
//   - events or samples the kernel lost, with the time span they affect;
//   - samples and records that could not be parsed (runs of them, with the
//     span around each), and why the first failed;
//   - calls with values the kernel cannot have returned, not replayed;
//   - a frame-pointer trace whose stacks mostly stop inside libc, with the
//     recording that reaches the caller;
//   - a table of mappings at the attach beside the trace that is not its own.
// Answers about pages changed in those spans may be incomplete; the user
// must know, but they are still answers.
//
//   for (const std::string& w : LoadWarnings(trace)) fprintf(stderr, "pageblame: %s\n", EscapeName(w).c_str());
#ifndef PAGEBLAME_SESSION_LOAD_WARNINGS_H_
#define PAGEBLAME_SESSION_LOAD_WARNINGS_H_

#include <string>
#include <vector>

#include "processor/replay/trace_loader.h"

namespace pageblame::session {

std::vector<std::string> LoadWarnings(const replay::LoadedTrace& trace);

}  // namespace pageblame::session

#endif  // PAGEBLAME_SESSION_LOAD_WARNINGS_H_

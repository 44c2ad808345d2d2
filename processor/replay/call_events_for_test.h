// For tests that drive replay with hand-built events: one syscall as the
// enter and exit TraceEvents the loader would make of it (the exit one
// nanosecond after the enter, on the same thread).
//
//   auto [in, out] = CallEvents(10, pid, tid, Syscall::kMunmap, {addr, len}, 0, stack);
//   replayer.Apply(in);
//   replayer.Apply(out);
#ifndef PAGEBLAME_REPLAY_CALL_EVENTS_FOR_TEST_H_
#define PAGEBLAME_REPLAY_CALL_EVENTS_FOR_TEST_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "processor/replay/trace_event.h"

namespace pageblame::replay {

inline std::pair<TraceEvent, TraceEvent> CallEvents(uint64_t t, uint32_t pid, uint32_t tid,
                                                    decode::Syscall sc,
                                                    const std::vector<uint64_t>& args,
                                                    int64_t ret, StackId stack = StackId()) {
  TraceEvent in;
  in.kind = TraceEvent::Kind::kEnter;
  in.time = t;
  in.pid = pid;
  in.tid = tid;
  in.syscall = sc;
  for (size_t i = 0; i < args.size() && i < 6; ++i) in.call().args[i] = args[i];
  in.call().stack = stack;
  TraceEvent out = in;
  out.kind = TraceEvent::Kind::kExit;
  out.time = t + 1;
  out.call().ret = ret;
  return {in, out};
}

}  // namespace pageblame::replay

#endif  // PAGEBLAME_REPLAY_CALL_EVENTS_FOR_TEST_H_

#include "processor/replay/syscall_pairer.h"

#include <algorithm>

namespace pageblame::replay {

bool SyscallPairer::Enter(const TraceEvent& e) {
  const bool was_waiting = waiting_;
  pending_.enter = e;
  pending_.path = StringId();
  const uint64_t raw_duplicate = e.kind == TraceEvent::Kind::kEnter ? e.call().raw_duplicate_time : 0;
  pending_.first_time = raw_duplicate ? std::min(raw_duplicate, e.time) : e.time;
  waiting_ = true;
  return was_waiting;
}

const SyscallPairer::Pending* SyscallPairer::Exit(decode::Syscall syscall) {
  if (!waiting_) return nullptr;
  waiting_ = false;
  // Another syscall's exit: the waiting enter's exit was lost.
  if (pending_.enter.syscall != syscall) return nullptr;
  return &pending_;
}

}  // namespace pageblame::replay

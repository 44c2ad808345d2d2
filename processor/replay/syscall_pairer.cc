#include "processor/replay/syscall_pairer.h"

#include <algorithm>

namespace pageblame::replay {

bool SyscallPairer::Enter(const TraceEvent& e) {
  const uint64_t first = e.twin_time ? std::min(e.twin_time, e.time) : e.time;
  Pending& p = pending_[e.tid];
  const bool was_waiting = p.active;
  p = Pending{e, StringId(), first, true};
  if (!was_waiting) ++active_;
  return was_waiting;
}

const SyscallPairer::Pending* SyscallPairer::Exit(const TraceEvent& e) {
  auto it = pending_.find(e.tid);
  if (it == pending_.end() || !it->second.active) return nullptr;
  it->second.active = false;
  --active_;
  // Another syscall's exit: the pending enter's exit was lost.
  if (it->second.enter.syscall != e.syscall) return nullptr;
  return &it->second;
}

SyscallPairer::Pending* SyscallPairer::InCall(uint32_t tid) {
  auto it = pending_.find(tid);
  return it == pending_.end() || !it->second.active ? nullptr : &it->second;
}

void SyscallPairer::Forget(uint32_t tid) {
  auto it = pending_.find(tid);
  if (it == pending_.end()) return;
  if (it->second.active) --active_;
  pending_.erase(it);
}

}  // namespace pageblame::replay

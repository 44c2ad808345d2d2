#include "processor/replay/syscall_pairer.h"

#include <algorithm>

namespace pageblame::replay {

bool SyscallPairer::Enter(const TraceEvent& e) {
  const uint64_t first = e.twin_time ? std::min(e.twin_time, e.time) : e.time;
  auto [it, inserted] = pending_.try_emplace(e.tid);
  it->second = Pending{e, StringId(), first};
  return !inserted;
}

const SyscallPairer::Pending* SyscallPairer::Exit(const TraceEvent& e) {
  auto it = pending_.find(e.tid);
  if (it == pending_.end()) return nullptr;
  if (it->second.enter.syscall != e.syscall) {
    // The thread left some other call: the pending enter's exit was lost.
    pending_.erase(it);
    return nullptr;
  }
  last_ = it->second;
  pending_.erase(it);
  return &last_;
}

SyscallPairer::Pending* SyscallPairer::InCall(uint32_t tid) {
  auto it = pending_.find(tid);
  return it == pending_.end() ? nullptr : &it->second;
}

}  // namespace pageblame::replay

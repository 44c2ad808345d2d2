#include "processor/replay/syscall_pairer.h"

#include <algorithm>

namespace pageblame::replay {

bool SyscallPairer::Enter(const TraceEvent& e) {
  uint64_t first = e.time;
  if (auto t = twin_enter_.find(e.tid); t != twin_enter_.end()) {
    // Only the same syscall's twin, seen just before: a thread makes one
    // syscall at a time, so no other call can sit between the two.
    if (t->second.syscall == e.syscall && t->second.time <= e.time) {
      first = std::min(first, t->second.time);
    }
    twin_enter_.erase(t);
  }
  auto [it, inserted] = pending_.try_emplace(e.tid);
  it->second = Pending{e, StringId(), first, e.time};
  return !inserted;
}

void SyscallPairer::Twin(const TraceEvent& e) {
  if (!e.flag) {
    twin_enter_[e.tid] = e;
    return;
  }
  Pending* p = InCall(e.tid);
  if (p != nullptr && p->enter.syscall == e.syscall) p->last_time = std::max(p->last_time, e.time);
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

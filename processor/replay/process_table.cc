#include "processor/replay/process_table.h"

namespace pageblame::replay {

uint32_t ProcessTable::ProcessFor(uint32_t pid, uint64_t time) {
  if (auto it = pid_to_process_.find(pid); it != pid_to_process_.end()) return it->second;
  index::Process p;
  p.pid = pid;
  p.t_start = time;
  p.existed_before_trace = true;  // until a fork or exec in the trace says otherwise
  const uint32_t i = idx_->AddProcess(p);
  pid_to_process_[pid] = i;
  return i;
}

std::optional<uint32_t> ProcessTable::Find(uint32_t pid) const {
  auto it = pid_to_process_.find(pid);
  if (it == pid_to_process_.end()) return std::nullopt;
  return it->second;
}

ProcessTable::Thread& ProcessTable::ThreadSeen(uint32_t pid, uint32_t tid, uint64_t time) {
  return Seen(threads_[tid], pid, tid, time);
}

ProcessTable::Thread& ProcessTable::Seen(Thread& th, uint32_t pid, uint32_t tid, uint64_t time) {
  if (th.seen == membership_ && th.pid == pid) return th;
  th.process = ProcessFor(pid, time);
  th.pid = pid;
  th.seen = membership_;
  Proc(th.process).threads.insert(tid);
  return th;
}

ProcessTable::Thread* ProcessTable::FindThread(uint32_t tid) {
  auto it = threads_.find(tid);
  return it == threads_.end() ? nullptr : &it->second;
}

uint32_t ProcessTable::AddChild(const index::Process& child, std::optional<uint32_t> parent,
                                uint32_t tid) {
  const uint32_t c = idx_->AddProcess(child);
  pid_to_process_[child.pid] = c;
  ProcState state = parent ? Proc(*parent) : ProcState();
  state.threads = {tid};
  Proc(c) = std::move(state);
  MembershipChanged();
  return c;
}

void ProcessTable::ThreadExited(uint32_t pid, uint32_t tid, uint64_t time) {
  if (Thread* th = FindThread(tid)) th->call.Forget();
  // A process ends with its last thread, not with its main thread.
  auto it = pid_to_process_.find(pid);
  if (it == pid_to_process_.end()) return;
  auto& threads = Proc(it->second).threads;
  threads.erase(tid);
  MembershipChanged();
  index::Process& p = idx_->mutable_process(it->second);
  if (threads.empty() && p.t_exit == index::kEndOfTrace) p.t_exit = time;
}

void ProcessTable::Renumber(const index::IndexThinning& n) {
  for (auto& entry : threads_) entry.second.last_event = n.Event(entry.second.last_event);
}

void ProcessTable::ForEachWaitingEnter(absl::FunctionRef<void(TraceEvent&)> fn) {
  for (auto& entry : threads_) {
    if (SyscallPairer::Pending* p = entry.second.call.InCall()) fn(p->enter);
  }
}

uint64_t ProcessTable::WaitingCalls() const {
  uint64_t n = 0;
  for (const auto& [tid, th] : threads_) n += th.call.waiting();
  return n;
}

}  // namespace pageblame::replay

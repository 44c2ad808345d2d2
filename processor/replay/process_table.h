// Which process each pid and thread belongs to during replay, and the replay
// state of processes and threads that the index does not keep (the program
// break, the exec image window, a thread's call in flight).
//
//   ProcessTable procs(&index);
//   ProcessTable::Thread& th = procs.ThreadSeen(pid, tid, time);  // makes the process if new
//   ProcessTable::ProcState& ps = procs.Proc(th.process);
//   procs.MembershipChanged();  // after a fork, exec or exit: threads look again
//
// A pid's process is the index entry made for it last: only a fork starts a
// new one (AddChild); anything else seen for a known pid belongs to it, even
// after an exit record (the main thread may exit first, or be replaced by an
// exec from another thread).
#ifndef PAGEBLAME_REPLAY_PROCESS_TABLE_H_
#define PAGEBLAME_REPLAY_PROCESS_TABLE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "processor/index/trace_index.h"
#include "processor/replay/syscall_pairer.h"

namespace pageblame::replay {

class ProcessTable {
 public:
  // Replay state of a process that the index does not need to keep.
  struct ProcState {
    bool brk_known = false;
    uint64_t brk = 0;  // current program break (unaligned, as brk() returns it)
    // From exec (or the start of an attach) until the process's first traced
    // call, mapping records outside calls are the kernel's exec mappings or
    // perf's synthesized ones: their ELF images are mapped whole.
    bool image_window = true;
    // Its live threads: it exits with the last.
    absl::flat_hash_set<uint32_t> threads;
  };
  // Replay state of a thread, found with one lookup per event (a hash lookup
  // per table per event was a sizeable part of replay), its syscall pairing
  // included.
  struct Thread {
    // The process it was last seen in (pid, process index), valid while
    // `seen` equals the table's membership generation.
    uint32_t pid = 0;
    uint32_t process = 0;
    uint64_t seen = 0;
    bool has_comm = false;
    StringId comm;
    EventId last_event;  // its last recorded call, until its next call's exit
    SyscallPairer call;  // its enter waiting for an exit
  };

  explicit ProcessTable(index::TraceIndex* idx) : idx_(idx) {}

  // The process of `pid`, made (as one that existed before the trace) if
  // the pid is new.
  uint32_t ProcessFor(uint32_t pid, uint64_t time);
  // The process of `pid` if it is known.
  std::optional<uint32_t> Find(uint32_t pid) const;
  // Thread `tid`'s state, remembering that it lives in pid's process.
  Thread& ThreadSeen(uint32_t pid, uint32_t tid, uint64_t time);
  // The same for a state already found (no lookup).
  Thread& Seen(Thread& th, uint32_t pid, uint32_t tid, uint64_t time);
  // Thread `tid`'s state, or null if none was made (nothing is made here).
  Thread* FindThread(uint32_t tid);
  // Thread `tid`'s state, made empty if new (its process is not looked up).
  Thread& ThreadState(uint32_t tid) { return threads_[tid]; }
  ProcState& Proc(uint32_t p) {
    if (p >= procs_.size()) procs_.resize(p + 1);
    return procs_[p];
  }
  // A new process for `child` (a fork), its replay state copied from
  // `parent`'s if given, with thread `tid` only. Returns its index.
  uint32_t AddChild(const index::Process& child, std::optional<uint32_t> parent, uint32_t tid);
  // Thread `tid` of `pid` exited: forgets its call in flight; the process
  // ends (t_exit) with its last thread.
  void ThreadExited(uint32_t pid, uint32_t tid, uint64_t time);
  // A pid's process or a process's threads changed: every thread's cached
  // process is looked up again when next seen.
  void MembershipChanged() { ++membership_; }
  // Enters still waiting for their exit.
  uint64_t WaitingCalls() const;
  // The index was thinned (TraceIndex::ThinBefore): the calls the threads
  // name take their new ids (a thread whose last call went forgets it).
  void Renumber(const index::IndexThinning& n);
  // Each thread's enter waiting for its exit, to change in place (the stack
  // table was thinned: its stack id is renumbered).
  void ForEachWaitingEnter(absl::FunctionRef<void(TraceEvent&)> fn);

 private:
  index::TraceIndex* idx_;
  absl::flat_hash_map<uint32_t, uint32_t> pid_to_process_;  // current generation
  std::vector<ProcState> procs_;                             // by process index
  // By tid. A call being applied lives here: nothing adds threads meanwhile.
  absl::flat_hash_map<uint32_t, Thread> threads_;
  uint64_t membership_ = 1;
};

}  // namespace pageblame::replay

#endif  // PAGEBLAME_REPLAY_PROCESS_TABLE_H_

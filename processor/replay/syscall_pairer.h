// Pairs each syscall exit with the enter of the same thread. Pairing is per
// tid, never global: threads interleave, and one thread can only be inside
// one syscall at a time.
//
//   SyscallPairer pairer;
//   pairer.Enter(e);                       // remembers args + stack for e.tid
//   const SyscallPairer::Pending* call = pairer.Exit(e);  // null: no matching enter
#ifndef PAGEBLAME_REPLAY_SYSCALL_PAIRER_H_
#define PAGEBLAME_REPLAY_SYSCALL_PAIRER_H_

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "processor/replay/trace_event.h"

namespace pageblame::replay {

class SyscallPairer {
 public:
  struct Pending {
    TraceEvent enter;
    StringId path;  // file name of an MMAP2 record seen during the call
    uint64_t first_time = 0;  // earliest sample of the call (a raw twin enter, if any)
  };

  // Returns true if an earlier enter on this tid was still waiting (its exit
  // was lost); that enter is dropped.
  bool Enter(const TraceEvent& e);
  // The enter matching this exit, removed from the table (valid until the next
  // call), or null if the thread has no pending enter of that syscall.
  const Pending* Exit(const TraceEvent& e);
  // The call thread `tid` is inside, or null.
  Pending* InCall(uint32_t tid);
  void Forget(uint32_t tid) { pending_.erase(tid); }
  size_t pending() const { return pending_.size(); }

 private:
  absl::flat_hash_map<uint32_t, Pending> pending_;

  Pending last_;
};

}  // namespace pageblame::replay

#endif  // PAGEBLAME_REPLAY_SYSCALL_PAIRER_H_

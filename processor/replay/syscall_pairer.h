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
    bool active = false;  // false once its exit came (the slot stays for the thread)
  };

  // Returns true if an earlier enter on this tid was still waiting (its exit
  // was lost); that enter is dropped.
  bool Enter(const TraceEvent& e);
  // The enter matching this exit, no longer pending (valid until the next
  // call), or null if the thread has no pending enter of that syscall.
  const Pending* Exit(const TraceEvent& e);
  // The call thread `tid` is inside, or null.
  Pending* InCall(uint32_t tid);
  void Forget(uint32_t tid);
  size_t pending() const { return active_; }

 private:
  // One slot per thread seen (until Forget), reused from call to call: an
  // exit marks its slot inactive instead of copying the call out and
  // erasing it, two of the costs of every call.
  absl::flat_hash_map<uint32_t, Pending> pending_;
  size_t active_ = 0;
};

}  // namespace pageblame::replay

#endif  // PAGEBLAME_REPLAY_SYSCALL_PAIRER_H_

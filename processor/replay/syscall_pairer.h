// Pairs a thread's syscall exit with its enter. Pairing is per thread, never
// global: threads interleave, and one thread can only be inside one syscall
// at a time. One pairer lives in each thread's replay state (Replayer's
// ThreadState), so an event finds its thread's pending call with the one
// lookup that finds the thread.
//
//   SyscallPairer pairer;                  // one per tid
//   pairer.Enter(e);                       // remembers args + stack
//   const SyscallPairer::Pending* call = pairer.Exit(e.syscall);  // null: no matching enter
#ifndef PAGEBLAME_REPLAY_SYSCALL_PAIRER_H_
#define PAGEBLAME_REPLAY_SYSCALL_PAIRER_H_

#include <cstdint>

#include "processor/replay/trace_event.h"

namespace pageblame::replay {

class SyscallPairer {
 public:
  struct Pending {
    TraceEvent enter;
    StringId path;  // file name of an MMAP2 record seen during the call
    uint64_t first_time = 0;  // earliest sample of the call (a raw duplicate enter, if any)
  };

  // Returns true if an earlier enter was still waiting (its exit was lost);
  // that enter is dropped.
  bool Enter(const TraceEvent& e);
  // The enter matching an exit of `syscall`, no longer waiting (valid until
  // the next Enter), or null if no enter of that syscall waits.
  const Pending* Exit(decode::Syscall syscall);
  // The call the thread is inside, or null.
  Pending* InCall() { return waiting_ ? &pending_ : nullptr; }
  // The thread exited: a waiting enter will get no exit.
  void Forget() { waiting_ = false; }
  bool waiting() const { return waiting_; }

 private:
  Pending pending_;
  bool waiting_ = false;
};

}  // namespace pageblame::replay

#endif  // PAGEBLAME_REPLAY_SYSCALL_PAIRER_H_

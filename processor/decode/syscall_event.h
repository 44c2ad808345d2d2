// One enter or exit of a memory syscall (memory_event_kind.h), as decoded
// from a tracepoint sample.
#ifndef PAGEBLAME_DECODE_SYSCALL_EVENT_H_
#define PAGEBLAME_DECODE_SYSCALL_EVENT_H_

#include <cstdint>

#include "processor/decode/memory_event_kind.h"  // Syscall, SyscallName

namespace pageblame::decode {

// One enter or exit of a memory syscall, from either syscalls:sys_{enter,exit}_X
// or raw_syscalls:sys_{enter,exit}.
struct DecodedSyscall {
  enum class Phase : uint8_t { kEnter, kExit };
  Phase phase = Phase::kEnter;
  Syscall syscall = Syscall::kMmap;
  // A raw_syscalls enter/exit of a call whose syscalls:* events are the
  // source: the same call seen twice. Not replayed; only its time is kept, so
  // the call's samples can all be found again (the perf script plugin).
  bool raw_duplicate = false;
  // Enter: the arguments in the syscall's own order (mmap: addr, len, prot,
  // flags, fd, off; munmap: addr, len; brk: brk; mremap: addr, old_len,
  // new_len, flags, new_addr; mprotect: start, len, prot; pkey_mprotect:
  // start, len, prot, pkey; madvise: start, len, advice). Unused slots are 0.
  uint64_t args[6] = {0, 0, 0, 0, 0, 0};
  int64_t ret = 0;  // Exit: the return value (negative errno on failure)
  // Set when Decode() returns false because the sample's payload is too
  // short for its event's format (a damaged trace), not because the sample
  // is one replay does not use.
  bool malformed = false;
};

// The kernel's failure convention for syscalls returning addresses:
// -4095..-1 are errnos (IS_ERR_VALUE in include/linux/err.h).
inline bool IsErrorReturn(int64_t ret) { return ret < 0 && ret >= -4095; }

}  // namespace pageblame::decode

#endif  // PAGEBLAME_DECODE_SYSCALL_EVENT_H_

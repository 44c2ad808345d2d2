// The memory syscalls pageblame replays, as decoded from tracepoint samples.
#ifndef PAGEBLAME_DECODE_SYSCALL_EVENT_H_
#define PAGEBLAME_DECODE_SYSCALL_EVENT_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pageblame::decode {

// The order is the index of per-syscall tables (argument names, raw
// syscall numbers, replay rules): append, never reorder.
enum class Syscall : uint8_t {
  kMmap,
  kMunmap,
  kBrk,
  kMremap,
  kMprotect,
  kPkeyMprotect,
  kMadvise,
  kCount
};
inline constexpr int kSyscallCount = static_cast<int>(Syscall::kCount);

std::string_view SyscallName(Syscall sc);

// The raw_syscalls numbers of the memory syscalls (indexed by Syscall) for
// perf's arch string (HEADER_ARCH; "" means x86_64), or nullopt for an arch
// we don't know. From arch/x86/entry/syscalls/syscall_64.tbl and
// include/uapi/asm-generic/unistd.h (arm64, riscv64).
using SyscallNumbers = std::array<int64_t, kSyscallCount>;
std::optional<SyscallNumbers> RawSyscallNumbers(const std::string& arch);

// One enter or exit of a memory syscall, from either syscalls:sys_{enter,exit}_X
// or raw_syscalls:sys_{enter,exit}.
struct DecodedSyscall {
  enum class Phase : uint8_t { kEnter, kExit };
  Phase phase = Phase::kEnter;
  Syscall syscall = Syscall::kMmap;
  // A raw_syscalls enter/exit of a call whose syscalls:* events are the
  // source: the same call seen twice. Not replayed; only its time is kept, so
  // the call's samples can all be found again (the perf script plugin).
  bool twin = false;
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

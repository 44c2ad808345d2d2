// The memory syscalls pageblame replays and how a trace names them: the one
// place that lists the seven syscalls, their tracepoints
// (syscalls:sys_{enter,exit}_X) and their raw_syscalls numbers per
// architecture. The decoder (SyscallDecoder, for every front end) and the
// perf script plugin (plugin/event_classifier) both ask it.
//
//   MemoryEventKind k = MemoryEventKind::Of("syscalls:sys_exit_mremap");
//   k.kind();                                   // Kind::kExit
//   k.syscall();                                // Syscall::kMremap
//   MemoryEventKind::Of("syscalls", "sys_enter_mlock").kind();  // Kind::kOther
//   MemoryEventKind::Of("raw_syscalls:sys_enter").kind();       // Kind::kRawEnter
//   SyscallOfNumber(*RawSyscallNumbers("x86_64"), 25);          // Syscall::kMremap
#ifndef PAGEBLAME_DECODE_MEMORY_EVENT_KIND_H_
#define PAGEBLAME_DECODE_MEMORY_EVENT_KIND_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/string_view.h"

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

// "mmap", ..., "pkey_mprotect", "madvise": the kernel's name of the syscall,
// as its tracepoints (sys_enter_X) and the CLI's output spell it.
std::string_view SyscallName(Syscall sc);

// The raw_syscalls numbers of the memory syscalls (indexed by Syscall) for
// perf's arch string (HEADER_ARCH; "" means x86_64), or nullopt for an arch
// we don't know. From arch/x86/entry/syscalls/syscall_64.tbl and
// include/uapi/asm-generic/unistd.h (arm64, riscv64).
using SyscallNumbers = std::array<int64_t, kSyscallCount>;
std::optional<SyscallNumbers> RawSyscallNumbers(const std::string& arch);

// The memory syscall whose number on the trace's arch is `nr` (the `id`
// field of a raw_syscalls event), else nullopt. Inline: the decoder asks it
// for every raw_syscalls sample, most of them other syscalls.
inline std::optional<Syscall> SyscallOfNumber(const SyscallNumbers& numbers, int64_t nr) {
  for (int i = 0; i < kSyscallCount; ++i) {
    if (nr == numbers[i]) return static_cast<Syscall>(i);
  }
  return std::nullopt;
}

// What a tracepoint is to replay, by its name alone: the enter or exit of
// one memory syscall (syscalls:sys_enter_X, syscalls:sys_exit_X), a
// raw_syscalls enter or exit (a memory syscall or not: only the payload's
// number says), or another event. Names match exactly: no "/term=.../"
// suffixes, no globs.
class MemoryEventKind {
 public:
  enum class Kind : uint8_t { kOther, kEnter, kExit, kRawEnter, kRawExit };

  // `system` and `name` as a tracepoint's format gives them
  // ("syscalls", "sys_enter_mmap").
  static MemoryEventKind Of(absl::string_view system, absl::string_view name);
  // "system:name", as perf names an event ("syscalls:sys_enter_mmap");
  // a name without ':' is kOther.
  static MemoryEventKind Of(absl::string_view event);

  Kind kind() const { return kind_; }
  // The syscall of a kEnter/kExit; kMmap for the other kinds.
  Syscall syscall() const { return syscall_; }
  bool is_raw() const { return kind_ == Kind::kRawEnter || kind_ == Kind::kRawExit; }
  // The tracepoint's name without its system ("sys_enter_mmap",
  // "sys_exit"), as TracingData's failures name formats; "" for kOther.
  std::string TracepointName() const;

  bool operator==(const MemoryEventKind& o) const {
    return kind_ == o.kind_ && syscall_ == o.syscall_;
  }
  bool operator!=(const MemoryEventKind& o) const { return !(*this == o); }

 private:
  MemoryEventKind(Kind kind, Syscall syscall) : kind_(kind), syscall_(syscall) {}

  Kind kind_;
  Syscall syscall_;
};

}  // namespace pageblame::decode

#endif  // PAGEBLAME_DECODE_MEMORY_EVENT_KIND_H_

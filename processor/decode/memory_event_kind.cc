#include "processor/decode/memory_event_kind.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace pageblame::decode {

std::string_view SyscallName(Syscall sc) {
  switch (sc) {
    case Syscall::kMmap: return "mmap";
    case Syscall::kMunmap: return "munmap";
    case Syscall::kBrk: return "brk";
    case Syscall::kMremap: return "mremap";
    case Syscall::kMprotect: return "mprotect";
    case Syscall::kPkeyMprotect: return "pkey_mprotect";
    case Syscall::kMadvise: return "madvise";
    case Syscall::kCount: break;
  }
  return "?";
}

std::optional<SyscallNumbers> RawSyscallNumbers(const std::string& arch) {
  // In Syscall's order: mmap, munmap, brk, mremap, mprotect, pkey_mprotect, madvise.
  if (arch.empty() || arch == "x86_64") return SyscallNumbers{9, 11, 12, 25, 10, 329, 28};
  if (arch == "aarch64" || arch == "arm64" || arch.rfind("riscv64", 0) == 0) {
    return SyscallNumbers{222, 215, 214, 216, 226, 288, 233};
  }
  return std::nullopt;
}

MemoryEventKind MemoryEventKind::Of(absl::string_view system, absl::string_view name) {
  const MemoryEventKind other(Kind::kOther, Syscall::kMmap);
  // raw_syscalls:sys_enter/sys_exit (include/trace/events/syscalls.h).
  if (system == "raw_syscalls") {
    if (name == "sys_enter") return MemoryEventKind(Kind::kRawEnter, Syscall::kMmap);
    if (name == "sys_exit") return MemoryEventKind(Kind::kRawExit, Syscall::kMmap);
    return other;
  }
  // syscalls:sys_enter_X/sys_exit_X (SYSCALL_TRACE_ENTER_EVENT and
  // SYSCALL_TRACE_EXIT_EVENT in include/linux/syscalls.h).
  if (system != "syscalls") return other;
  Kind kind;
  if (absl::ConsumePrefix(&name, "sys_enter_")) {
    kind = Kind::kEnter;
  } else if (absl::ConsumePrefix(&name, "sys_exit_")) {
    kind = Kind::kExit;
  } else {
    return other;
  }
  for (int i = 0; i < kSyscallCount; ++i) {
    const Syscall sc = static_cast<Syscall>(i);
    const std::string_view sc_name = SyscallName(sc);
    if (name == absl::string_view(sc_name.data(), sc_name.size())) return MemoryEventKind(kind, sc);
  }
  return other;
}

MemoryEventKind MemoryEventKind::Of(absl::string_view event) {
  const size_t colon = event.find(':');
  if (colon == absl::string_view::npos) return MemoryEventKind(Kind::kOther, Syscall::kMmap);
  return Of(event.substr(0, colon), event.substr(colon + 1));
}

std::string MemoryEventKind::TracepointName() const {
  const std::string_view sc = SyscallName(syscall_);
  switch (kind_) {
    case Kind::kOther: return "";
    case Kind::kEnter: return absl::StrCat("sys_enter_", absl::string_view(sc.data(), sc.size()));
    case Kind::kExit: return absl::StrCat("sys_exit_", absl::string_view(sc.data(), sc.size()));
    case Kind::kRawEnter: return "sys_enter";
    case Kind::kRawExit: return "sys_exit";
  }
  return "";
}

}  // namespace pageblame::decode

// Which samples perf script hands the plugin are memory-syscall events:
// syscalls:sys_{enter,exit}_X for the seven syscalls replay reads (mmap,
// munmap, brk, mremap, mprotect, pkey_mprotect, madvise), or
// raw_syscalls:sys_{enter,exit} whose syscall number (the `id` field) is one
// of those. What counts is decode::MemoryEventKind's, the decoder's own
// definition; this class only adds what the plugin's hot path needs: the
// name test runs once per event name (perf passes the same evsel name
// pointer for every sample of an event), and the raw test reads one field of
// the payload.
//
//   EventClassifier c(EventClassifier::NumbersForArch("x86_64").value());
//   c.IsMemorySyscall("syscalls:sys_enter_mmap", {});            // true
//   c.IsMemorySyscall("raw_syscalls:sys_exit", raw_payload);     // x86_64: iff id is 9/11/12/25/10/329/28
//   c.IsMemorySyscall("sched:sched_switch", raw_payload);        // false
//   c.RawExit("raw_syscalls:sys_exit", raw_payload);             // Syscall::kMmap if id is 9
#ifndef PAGEBLAME_PLUGIN_EVENT_CLASSIFIER_H_
#define PAGEBLAME_PLUGIN_EVENT_CLASSIFIER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "processor/decode/memory_event_kind.h"

namespace pageblame::plugin {

class EventClassifier {
 public:
  using Numbers = decode::SyscallNumbers;  // indexed by decode::Syscall
  enum class Kind : uint8_t { kOther, kMemory, kRawEnter, kRawExit };

  explicit EventClassifier(const Numbers& numbers) : numbers_(numbers) {}

  // Syscall numbers of the seven for perf's arch string (the trace's
  // HEADER_ARCH): decode::RawSyscallNumbers.
  static std::optional<Numbers> NumbersForArch(const std::string& arch);

  // By name only (decode::MemoryEventKind::Of): a specific memory-syscall
  // tracepoint, a raw one, or other.
  static Kind ClassifyName(std::string_view name);

  // `name` must stay valid while this classifier lives (perf's evsel names do).
  bool IsMemorySyscall(const char* name, absl::Span<const uint8_t> raw);
  // The memory syscall of a raw_syscalls:sys_exit sample, else nullopt.
  std::optional<decode::Syscall> RawExit(const char* name, absl::Span<const uint8_t> raw);

 private:
  Kind KindOf(const char* name);
  std::optional<decode::Syscall> RawSyscall(absl::Span<const uint8_t> raw) const;

  Numbers numbers_;
  absl::flat_hash_map<const char*, Kind> by_name_;
};

}  // namespace pageblame::plugin

#endif  // PAGEBLAME_PLUGIN_EVENT_CLASSIFIER_H_

#include "plugin/event_classifier.h"

#include "absl/strings/string_view.h"
#include "processor/base/byte_reader.h"

namespace pageblame::plugin {

std::optional<EventClassifier::Numbers> EventClassifier::NumbersForArch(const std::string& arch) {
  return decode::RawSyscallNumbers(arch);
}

EventClassifier::Kind EventClassifier::ClassifyName(std::string_view name) {
  using K = decode::MemoryEventKind::Kind;
  switch (decode::MemoryEventKind::Of(absl::string_view(name.data(), name.size())).kind()) {
    case K::kOther: return Kind::kOther;
    case K::kEnter:
    case K::kExit: return Kind::kMemory;
    case K::kRawEnter: return Kind::kRawEnter;
    case K::kRawExit: return Kind::kRawExit;
  }
  return Kind::kOther;
}

EventClassifier::Kind EventClassifier::KindOf(const char* name) {
  auto [it, inserted] = by_name_.try_emplace(name, Kind::kOther);
  if (inserted) it->second = ClassifyName(name);
  return it->second;
}

std::optional<decode::Syscall> EventClassifier::RawSyscall(absl::Span<const uint8_t> raw) const {
  // raw_syscalls:sys_enter/sys_exit: 8 bytes of common fields, then `long id`
  // (include/trace/events/syscalls.h, TP_STRUCT__entry of both events).
  ByteReader r(raw);
  int64_t id;
  if (!r.Skip(8) || !r.Read(&id)) return std::nullopt;
  return decode::SyscallOfNumber(numbers_, id);
}

bool EventClassifier::IsMemorySyscall(const char* name, absl::Span<const uint8_t> raw) {
  if (name == nullptr) return false;
  switch (KindOf(name)) {
    case Kind::kOther: return false;
    case Kind::kMemory: return true;
    case Kind::kRawEnter:
    case Kind::kRawExit: return RawSyscall(raw).has_value();
  }
  return false;
}

std::optional<decode::Syscall> EventClassifier::RawExit(const char* name, absl::Span<const uint8_t> raw) {
  if (name == nullptr || KindOf(name) != Kind::kRawExit) return std::nullopt;
  return RawSyscall(raw);
}

}  // namespace pageblame::plugin

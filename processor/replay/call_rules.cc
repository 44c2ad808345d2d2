#include "processor/replay/call_rules.h"

#include <array>

namespace pageblame::replay {

CallRule RuleFor(decode::Syscall syscall) {
  // Indexed by decode::Syscall, in its order.
  static constexpr std::array<CallRule, decode::kSyscallCount> kRules = {
      ApplyMmap,     ApplyMunmap,   ApplyBrk,     ApplyMremap,
      ApplyMprotect, ApplyMprotect, ApplyMadvise,
  };
  return kRules[static_cast<size_t>(syscall)];
}

}  // namespace pageblame::replay

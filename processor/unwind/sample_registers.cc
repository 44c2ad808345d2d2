#include "processor/unwind/sample_registers.h"

#include <cstring>

#include "absl/numeric/bits.h"

namespace pageblame::unwind {

RegsResult ReadSampleRegisters(const perf::Sample& sample, bool x86_64, RegisterSet* out) {
  *out = RegisterSet();
  if (sample.regs_abi == perf::kRegsAbiNone || sample.attr == nullptr) return RegsResult::kNone;
  if (!x86_64 || sample.regs_abi != perf::kRegsAbi64) return RegsResult::kOtherAbi;
  const uint64_t mask = sample.attr->sample_regs_user;
  if (!(mask & (uint64_t{1} << x86_64::kPerfRegIp)) ||
      !(mask & (uint64_t{1} << x86_64::kPerfRegSp))) {
    return RegsResult::kMaskLacksIpSp;
  }
  // The value of perf register p is the k-th u64, k = the mask's bits below p.
  const size_t count = sample.user_regs.size() / 8;
  for (int reg = 0; reg < x86_64::kNumRegs; ++reg) {
    const int p = x86_64::kPerfRegOf[reg];
    if (!(mask & (uint64_t{1} << p))) continue;
    const size_t k = static_cast<size_t>(absl::popcount(mask & ((uint64_t{1} << p) - 1)));
    if (k >= count) continue;  // the parser checked the size; be safe anyway
    uint64_t v;
    std::memcpy(&v, sample.user_regs.data() + 8 * k, 8);
    out->Set(reg, v);
  }
  if (!out->Known(x86_64::kRip) || !out->Known(x86_64::kRsp)) return RegsResult::kNone;
  return RegsResult::kOk;
}

}  // namespace pageblame::unwind

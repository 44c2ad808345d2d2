#include "processor/unwind/sample_registers.h"

#include <cstring>

#include "absl/numeric/bits.h"

namespace pageblame::unwind {
namespace {

// perf's register numbers (x86_64::kPerfRegOf's values) below this.
constexpr int kPerfRegs = 24;

// The inverse of x86_64::kPerfRegOf: the DWARF register of a perf
// register, -1 for one the unwinder does not use (flags, segments).
struct DwarfRegTable {
  int8_t of[kPerfRegs];
  constexpr DwarfRegTable() : of() {
    for (int p = 0; p < kPerfRegs; ++p) of[p] = -1;
    for (int reg = 0; reg < x86_64::kNumRegs; ++reg) of[x86_64::kPerfRegOf[reg]] = static_cast<int8_t>(reg);
  }
};
constexpr DwarfRegTable kDwarfRegs;
constexpr const int8_t* kDwarfRegOfPerf = kDwarfRegs.of;

}  // namespace

RegsResult ReadSampleRegisters(const perf::Sample& sample, bool x86_64, RegisterSet* out) {
  out->KeepOnly(0);  // (the values of unknown registers are never read)
  if (sample.regs_abi == perf::kRegsAbiNone || sample.attr == nullptr) return RegsResult::kNone;
  if (!x86_64 || sample.regs_abi != perf::kRegsAbi64) return RegsResult::kOtherAbi;
  const uint64_t mask = sample.attr->sample_regs_user;
  if (!(mask & (uint64_t{1} << x86_64::kPerfRegIp)) ||
      !(mask & (uint64_t{1} << x86_64::kPerfRegSp))) {
    return RegsResult::kMaskLacksIpSp;
  }
  // The value of perf register p is the k-th u64, k = the mask's bits below
  // p: the mask's bits are walked once, upwards, each taking the next u64
  // (a popcount per register was a call into libgcc on a baseline x86-64
  // build, per sample).
  const size_t count = sample.user_regs.size() / 8;
  size_t k = 0;
  for (uint64_t left = mask; left != 0 && k < count; left &= left - 1, ++k) {
    const int p = absl::countr_zero(left);
    const int reg = p < kPerfRegs ? kDwarfRegOfPerf[p] : -1;
    if (reg < 0) continue;  // a register the unwinder does not use
    uint64_t v;
    std::memcpy(&v, sample.user_regs.data() + 8 * k, 8);
    out->Set(reg, v);
  }
  if (!out->Known(x86_64::kRip) || !out->Known(x86_64::kRsp)) return RegsResult::kNone;
  return RegsResult::kOk;
}

}  // namespace pageblame::unwind

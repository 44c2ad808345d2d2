// The registers of one frame while unwinding: a value and a "known" bit per
// DWARF register (x86_64_registers.h). A register is unknown when the CFI
// says the caller's value is lost (call-clobbered) or it could not be read.
//
//   RegisterSet regs;
//   regs.Set(x86_64::kRsp, sp);
//   uint64_t v;
//   if (regs.Get(x86_64::kRbp, &v)) ...
#ifndef PAGEBLAME_UNWIND_REGISTER_SET_H_
#define PAGEBLAME_UNWIND_REGISTER_SET_H_

#include <cstdint>

#include "absl/numeric/bits.h"
#include "processor/unwind/x86_64_registers.h"

namespace pageblame::unwind {

class RegisterSet {
 public:
  bool Get(int reg, uint64_t* out) const {
    if (reg < 0 || reg >= x86_64::kNumRegs || !(known_ & (1u << reg))) return false;
    if (consulted_ != nullptr) *consulted_ |= 1u << reg;
    *out = values_[reg];
    return true;
  }
  // From now on every Get of a known register sets its bit in *consulted
  // (null: none noted). Not copied by CopyKnown (the unwind memo notes what
  // an unwind consulted: unwind_memo.h).
  void Track(uint32_t* consulted) { consulted_ = consulted; }
  uint32_t known_mask() const { return known_; }
  bool Known(int reg) const { return reg >= 0 && reg < x86_64::kNumRegs && (known_ & (1u << reg)); }
  void Set(int reg, uint64_t value) {
    if (reg < 0 || reg >= x86_64::kNumRegs) return;
    values_[reg] = value;
    known_ |= 1u << reg;
  }
  // Forgets every register whose bit is clear in `mask` (bit r: register r).
  void KeepOnly(uint32_t mask) { known_ &= mask; }
  // This set made `from` with only the registers of `mask` kept: the same
  // as `*this = from; KeepOnly(mask)`, but copying the kept values alone,
  // one at a time (the unwinder does it at every step: a whole set's copy,
  // read in 16-byte pieces just after its 8-byte values were written, was
  // a fifth of the unwinding). The values of unknown registers are never
  // read, so they are left as they were.
  void CopyKnown(const RegisterSet& from, uint32_t mask) {
    known_ = from.known_ & mask;
    for (uint32_t left = known_; left != 0; left &= left - 1) {
      const int reg = absl::countr_zero(left);
      values_[reg] = from.values_[reg];
    }
  }
  void Forget(int reg) {
    if (reg >= 0 && reg < x86_64::kNumRegs) known_ &= ~(1u << reg);
  }
  // The pc and sp, which every frame has (0 if unknown, never a valid pc).
  uint64_t pc() const { return Known(x86_64::kRip) ? values_[x86_64::kRip] : 0; }
  uint64_t sp() const { return Known(x86_64::kRsp) ? values_[x86_64::kRsp] : 0; }

 private:
  uint64_t values_[x86_64::kNumRegs] = {};
  uint32_t known_ = 0;
  uint32_t* consulted_ = nullptr;
};

}  // namespace pageblame::unwind

#endif  // PAGEBLAME_UNWIND_REGISTER_SET_H_

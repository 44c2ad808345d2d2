// How to get from one frame to its caller at one pc, compiled once from
// libdw's CFI (a Dwarf_Frame from dwarf_cfi_addrframe) into a small struct
// the unwinder applies to every sample at that pc without libdw: the CFA as
// "register + offset" and each register as "same", "lost", "saved at
// CFA + n", "CFA + n" or "in register r". Rules libdw hands out as DWARF
// expressions (PLT entries, signal frames, hand-written assembly) are kept
// as such and evaluated (dwarf_expression.h).
//
//   ExpressionPool pool;
//   FrameRule rule;
//   if (FrameRule::Compile(dwarf_frame, &pool, &rule)) {
//     RegisterSet caller;
//     StepStatus s = rule.Apply(regs, mem, pool, &caller);  // caller.pc(): the return address
//   }
#ifndef PAGEBLAME_UNWIND_FRAME_RULE_H_
#define PAGEBLAME_UNWIND_FRAME_RULE_H_

#include <elfutils/libdw.h>

#include <cstdint>
#include <deque>
#include <vector>

#include "processor/unwind/register_set.h"
#include "processor/unwind/stack_memory.h"

namespace pageblame::unwind {

// The DWARF expressions of the compiled rules, each at a stable index.
using ExpressionPool = std::deque<std::vector<Dwarf_Op>>;

enum class StepStatus {
  kOk,
  kEnd,              // the return address is undefined or 0: the outermost frame
  kBelowCopy,        // a read below the copied stack
  kPastCopy,         // a read past the end of the copied stack
  kUnknownRegister,  // the rule needs a register this frame does not know
  kUnsupported,      // a rule or expression the unwinder cannot evaluate
};

struct RegRule {
  enum Kind : uint8_t {
    kUndefined,   // the caller's value is lost (call-clobbered)
    kSameValue,   // unchanged by this frame
    kAtCfa,       // saved in memory at CFA + offset
    kCfaPlus,     // is CFA + offset (val_offset: the caller's sp)
    kRegister,    // is in register `reg` of this frame
    kExpression,  // DWARF expression `expr` in the pool
  };
  Kind kind = kUndefined;
  uint8_t reg = 0;
  uint32_t expr = 0;
  int64_t offset = 0;
};

struct FrameRule {
  enum CfaKind : uint8_t { kCfaRegOffset, kCfaExpression };
  CfaKind cfa_kind = kCfaRegOffset;
  uint8_t cfa_reg = 0;
  bool signal_frame = false;  // the caller's pc is exact (not after a call)
  uint32_t cfa_expr = 0;
  int64_t cfa_offset = 0;
  RegRule reg_rules[x86_64::kNumRegs];
  // For Apply, from reg_rules: the registers the caller shares with this
  // frame (kSameValue), and the others that have a value in the caller (any
  // other rule but kUndefined), the return address always and last.
  uint32_t same_mask = 0;
  uint8_t num_moved = 0;
  uint8_t moved[x86_64::kNumRegs] = {};

  // False if libdw cannot describe the CFA here, or the return address
  // column is not x86-64's.
  static bool Compile(Dwarf_Frame* frame, ExpressionPool* pool, FrameRule* out);
  // Fills same_mask and moved from reg_rules (Compile does; a rule made by
  // hand calls it once its reg_rules are set).
  void Index();

  // The caller's registers from this frame's (`regs`) and the stack copy.
  // A saved register that cannot be read is left unknown in the caller
  // (libdwfl does the same); only the return address must be read.
  StepStatus Apply(const RegisterSet& regs, const StackMemory& mem, const ExpressionPool& pool,
                   RegisterSet* caller) const;
};

}  // namespace pageblame::unwind

#endif  // PAGEBLAME_UNWIND_FRAME_RULE_H_

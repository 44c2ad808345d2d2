#include "processor/unwind/frame_rule.h"

#include <dwarf.h>

#include "processor/unwind/dwarf_expression.h"

namespace pageblame::unwind {
namespace {

uint32_t AddExpression(const Dwarf_Op* ops, size_t n, ExpressionPool* pool) {
  pool->emplace_back(ops, ops + n);
  return static_cast<uint32_t>(pool->size() - 1);
}

// dwarf_frame_register's answers (libdw/dwarf_frame_register.c): no ops and
// ops == ops_mem: undefined; no ops and ops == null: same value; offset(N)
// is {call_frame_cfa, [plus_uconst N]}, val_offset(N) the same plus
// stack_value, register(R) {regx R}; anything else is an expression.
RegRule CompileRegister(Dwarf_Frame* frame, int reg, ExpressionPool* pool) {
  RegRule r;
  Dwarf_Op mem[3];
  Dwarf_Op* ops = nullptr;
  size_t n = 0;
  if (dwarf_frame_register(frame, reg, mem, &ops, &n) != 0) return r;  // as libdwfl: unknown
  if (n == 0) {
    r.kind = ops == nullptr ? RegRule::kSameValue : RegRule::kUndefined;
    return r;
  }
  if (ops[0].atom == DW_OP_call_frame_cfa) {
    size_t i = 1;
    if (i < n && ops[i].atom == DW_OP_plus_uconst) r.offset = static_cast<int64_t>(ops[i++].number);
    const bool value = i < n && ops[i].atom == DW_OP_stack_value;
    if (value) ++i;
    if (i == n) {
      r.kind = value ? RegRule::kCfaPlus : RegRule::kAtCfa;
      return r;
    }
    r.offset = 0;
  }
  if (n == 1 && ops[0].atom == DW_OP_regx && ops[0].number < x86_64::kNumRegs) {
    r.kind = RegRule::kRegister;
    r.reg = static_cast<uint8_t>(ops[0].number);
    return r;
  }
  r.kind = RegRule::kExpression;
  r.expr = AddExpression(ops, n, pool);
  return r;
}

}  // namespace

bool FrameRule::Compile(Dwarf_Frame* frame, ExpressionPool* pool, FrameRule* out) {
  *out = FrameRule();
  bool signal = false;
  if (dwarf_frame_info(frame, nullptr, nullptr, &signal) != x86_64::kRip) return false;
  out->signal_frame = signal;
  Dwarf_Op* ops = nullptr;
  size_t n = 0;
  if (dwarf_frame_cfa(frame, &ops, &n) != 0 || n == 0) return false;
  if (n == 1 && ops[0].atom == DW_OP_bregx && ops[0].number < x86_64::kNumRegs) {
    out->cfa_kind = kCfaRegOffset;
    out->cfa_reg = static_cast<uint8_t>(ops[0].number);
    out->cfa_offset = static_cast<int64_t>(ops[0].number2);
  } else {
    out->cfa_kind = kCfaExpression;
    out->cfa_expr = AddExpression(ops, n, pool);
  }
  for (int reg = 0; reg < x86_64::kNumRegs; ++reg) {
    out->reg_rules[reg] = CompileRegister(frame, reg, pool);
  }
  out->Index();
  return true;
}

void FrameRule::Index() {
  // Most registers are the same in the caller or lost there: Apply copies
  // the first kind at once and steps only through the others (a frame has
  // one to four: the return address, the saved rbp, rbx...).
  same_mask = 0;
  num_moved = 0;
  for (int reg = 0; reg < x86_64::kNumRegs; ++reg) {
    if (reg == x86_64::kRip) continue;
    const RegRule::Kind kind = reg_rules[reg].kind;
    if (kind == RegRule::kSameValue) {
      same_mask |= 1u << reg;
    } else if (kind != RegRule::kUndefined) {
      moved[num_moved++] = static_cast<uint8_t>(reg);
    }
  }
  moved[num_moved++] = x86_64::kRip;
}

namespace {

StepStatus FromRead(StackMemory::Result r) {
  return r == StackMemory::kBelowCopy ? StepStatus::kBelowCopy : StepStatus::kPastCopy;
}

StepStatus FromEval(EvalStatus s) {
  switch (s) {
    case EvalStatus::kOk: return StepStatus::kOk;
    case EvalStatus::kBelowCopy: return StepStatus::kBelowCopy;
    case EvalStatus::kPastCopy: return StepStatus::kPastCopy;
    case EvalStatus::kUnknownRegister: return StepStatus::kUnknownRegister;
    case EvalStatus::kUnsupported: return StepStatus::kUnsupported;
  }
  return StepStatus::kUnsupported;
}

// One register of the caller; kOk with *known false if the CFI says it is lost.
StepStatus CallerValue(const RegRule& r, int reg, uint64_t cfa, const RegisterSet& regs,
                       const StackMemory& mem, const ExpressionPool& pool, uint64_t* out,
                       bool* known) {
  *known = false;
  switch (r.kind) {
    case RegRule::kUndefined:
      return StepStatus::kOk;
    case RegRule::kSameValue:
      *known = regs.Get(reg, out);
      return StepStatus::kOk;
    case RegRule::kAtCfa:
      if (StackMemory::Result res = mem.Read(cfa + r.offset, out); res != StackMemory::kOk) {
        return FromRead(res);
      }
      *known = true;
      return StepStatus::kOk;
    case RegRule::kCfaPlus:
      *out = cfa + r.offset;
      *known = true;
      return StepStatus::kOk;
    case RegRule::kRegister:
      *known = regs.Get(r.reg, out);
      return StepStatus::kOk;
    case RegRule::kExpression: {
      bool is_value = false;
      uint64_t v;
      EvalStatus s = EvalExpression(pool[r.expr], regs, mem, &cfa, &v, &is_value);
      if (s != EvalStatus::kOk) return FromEval(s);
      if (is_value) {
        *out = v;
      } else if (StackMemory::Result res = mem.Read(v, out); res != StackMemory::kOk) {
        return FromRead(res);
      }
      *known = true;
      return StepStatus::kOk;
    }
  }
  return StepStatus::kUnsupported;
}

}  // namespace

StepStatus FrameRule::Apply(const RegisterSet& regs, const StackMemory& mem,
                            const ExpressionPool& pool, RegisterSet* caller) const {
  uint64_t cfa = 0;
  if (cfa_kind == kCfaRegOffset) {
    if (!regs.Get(cfa_reg, &cfa)) return StepStatus::kUnknownRegister;
    cfa += cfa_offset;
  } else {
    bool is_value = false;
    EvalStatus s = EvalExpression(pool[cfa_expr], regs, mem, nullptr, &cfa, &is_value);
    if (s != EvalStatus::kOk) return FromEval(s);
  }
  // What reg_rules say register by register (a lost one stays unknown),
  // the return address last, as its rule alone can stop the step.
  caller->CopyKnown(regs, same_mask);
  for (uint8_t i = 0; i < num_moved; ++i) {
    const int reg = moved[i];
    uint64_t v = 0;
    bool known = false;
    StepStatus s = CallerValue(reg_rules[reg], reg, cfa, regs, mem, pool, &v, &known);
    if (reg == x86_64::kRip) {
      if (s != StepStatus::kOk) return s;
      if (!known || v == 0) return StepStatus::kEnd;
    }
    if (s == StepStatus::kOk && known) caller->Set(reg, v);
  }
  // The x86-64 ABI's default: the caller's sp is the CFA (libdw's backend
  // says so for every CIE; a rule that drops it would leave no sp).
  if (!caller->Known(x86_64::kRsp)) caller->Set(x86_64::kRsp, cfa);
  return StepStatus::kOk;
}

}  // namespace pageblame::unwind

#include "processor/unwind/dwarf_expression.h"

#include <dwarf.h>

#include <algorithm>

namespace pageblame::unwind {
namespace {

constexpr int kMaxSteps = 1000;
constexpr int kMaxDepth = 64;

// A fixed-size evaluation stack: CFI expressions are a handful of operations.
class EvalStack {
 public:
  bool Push(uint64_t v) {
    if (size_ == kMaxDepth) return false;
    v_[size_++] = v;
    return true;
  }
  bool Pop(uint64_t* v) {
    if (size_ == 0) return false;
    *v = v_[--size_];
    return true;
  }
  // The entry `depth` from the top (0 = the top).
  bool Peek(size_t depth, uint64_t* v) const {
    if (depth >= size_) return false;
    *v = v_[size_ - 1 - depth];
    return true;
  }
  size_t size() const { return size_; }

 private:
  uint64_t v_[kMaxDepth];
  size_t size_ = 0;
};

EvalStatus FromRead(StackMemory::Result r) {
  return r == StackMemory::kBelowCopy ? EvalStatus::kBelowCopy : EvalStatus::kPastCopy;
}

// Two operands, one result.
bool Binary(uint8_t atom, uint64_t a, uint64_t b, uint64_t* out) {
  const int64_t sa = static_cast<int64_t>(a), sb = static_cast<int64_t>(b);
  switch (atom) {
    case DW_OP_and: *out = a & b; return true;
    case DW_OP_or: *out = a | b; return true;
    case DW_OP_xor: *out = a ^ b; return true;
    case DW_OP_plus: *out = a + b; return true;
    case DW_OP_minus: *out = a - b; return true;
    case DW_OP_mul: *out = a * b; return true;
    case DW_OP_shl: *out = b >= 64 ? 0 : a << b; return true;
    case DW_OP_shr: *out = b >= 64 ? 0 : a >> b; return true;
    case DW_OP_shra: *out = static_cast<uint64_t>(sa >> std::min<uint64_t>(b, 63)); return true;
    case DW_OP_div:
      if (sb == 0 || (sa == INT64_MIN && sb == -1)) return false;
      *out = static_cast<uint64_t>(sa / sb);
      return true;
    case DW_OP_mod:
      if (b == 0) return false;
      *out = a % b;
      return true;
    case DW_OP_eq: *out = sa == sb; return true;
    case DW_OP_ne: *out = sa != sb; return true;
    case DW_OP_lt: *out = sa < sb; return true;
    case DW_OP_le: *out = sa <= sb; return true;
    case DW_OP_gt: *out = sa > sb; return true;
    case DW_OP_ge: *out = sa >= sb; return true;
  }
  return false;
}

// The operations that only rearrange or compute on the stack. Returns
// false for any other operation; *ok says whether the stack allowed it.
bool StackOp(const Dwarf_Op& op, EvalStack& st, bool* ok) {
  uint64_t a, b, c;
  switch (op.atom) {
    case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u: case DW_OP_const2s:
    case DW_OP_const4u: case DW_OP_const4s: case DW_OP_const8u: case DW_OP_const8s:
    case DW_OP_constu: case DW_OP_consts:
      *ok = st.Push(op.number);
      return true;
    case DW_OP_dup: *ok = st.Peek(0, &a) && st.Push(a); return true;
    case DW_OP_drop: *ok = st.Pop(&a); return true;
    case DW_OP_over: *ok = st.Peek(1, &a) && st.Push(a); return true;
    case DW_OP_pick: *ok = st.Peek(op.number, &a) && st.Push(a); return true;
    case DW_OP_swap: *ok = st.Pop(&a) && st.Pop(&b) && st.Push(a) && st.Push(b); return true;
    case DW_OP_rot:
      *ok = st.Pop(&a) && st.Pop(&b) && st.Pop(&c) && st.Push(a) && st.Push(c) && st.Push(b);
      return true;
    case DW_OP_abs: *ok = st.Pop(&a) && st.Push(static_cast<int64_t>(a) < 0 ? -a : a); return true;
    case DW_OP_neg: *ok = st.Pop(&a) && st.Push(-a); return true;
    case DW_OP_not: *ok = st.Pop(&a) && st.Push(~a); return true;
    case DW_OP_plus_uconst: *ok = st.Pop(&a) && st.Push(a + op.number); return true;
    case DW_OP_nop: *ok = true; return true;
  }
  return false;
}

// One evaluation: the operations that read registers, memory or the CFA,
// and the branches, each in a function of its own.
class Evaluator {
 public:
  Evaluator(absl::Span<const Dwarf_Op> ops, const RegisterSet& regs, const StackMemory& mem,
            const uint64_t* cfa)
      : ops_(ops), regs_(regs), mem_(mem), cfa_(cfa) {}

  EvalStatus Run(uint64_t* result, bool* is_value) {
    *is_value = false;
    int steps = 0;
    for (size_t i = 0; i < ops_.size(); ++i) {
      if (++steps > kMaxSteps) return EvalStatus::kUnsupported;
      if (EvalStatus s = Step(&i, is_value); s != EvalStatus::kOk) return s;
    }
    if (!st_.Pop(result)) return EvalStatus::kUnsupported;
    return EvalStatus::kOk;
  }

 private:
  // Operation *i; a branch sets *i to the operation before its target.
  EvalStatus Step(size_t* i, bool* is_value) {
    const Dwarf_Op& op = ops_[*i];
    bool ok = true;
    if (op.atom >= DW_OP_lit0 && op.atom <= DW_OP_lit31) {
      ok = st_.Push(op.atom - DW_OP_lit0);
    } else if (op.atom >= DW_OP_breg0 && op.atom <= DW_OP_breg31) {
      // libdw keeps the offset, a SLEB128, in `number`.
      return PushRegister(op.atom - DW_OP_breg0, op.number);
    } else if (!StackOp(op, st_, &ok)) {
      return OtherOp(op, i, is_value);
    }
    return ok ? EvalStatus::kOk : EvalStatus::kUnsupported;
  }

  // What reads registers, memory or the CFA, branches, ends the expression,
  // or takes two operands.
  EvalStatus OtherOp(const Dwarf_Op& op, size_t* i, bool* is_value) {
    uint64_t a = 0, b = 0, c = 0;
    switch (op.atom) {
      case DW_OP_bregx: return PushRegister(static_cast<int>(op.number), op.number2);
      case DW_OP_call_frame_cfa:
        if (cfa_ == nullptr) return EvalStatus::kUnsupported;
        return st_.Push(*cfa_) ? EvalStatus::kOk : EvalStatus::kUnsupported;
      case DW_OP_deref: return Deref(8);
      case DW_OP_deref_size: return Deref(op.number);
      case DW_OP_skip: return Jump(op, i);
      case DW_OP_bra:
        if (!st_.Pop(&a)) return EvalStatus::kUnsupported;
        return a == 0 ? EvalStatus::kOk : Jump(op, i);
      case DW_OP_stack_value:
        // The result is the value on the stack, not a location; it must
        // be the last operation.
        if (*i + 1 != ops_.size()) return EvalStatus::kUnsupported;
        *is_value = true;
        return EvalStatus::kOk;
    }
    const bool ok = st_.Pop(&b) && st_.Pop(&a) && Binary(op.atom, a, b, &c) && st_.Push(c);
    return ok ? EvalStatus::kOk : EvalStatus::kUnsupported;
  }

  EvalStatus PushRegister(int reg, uint64_t offset) {
    uint64_t a;
    if (!regs_.Get(reg, &a)) return EvalStatus::kUnknownRegister;
    return st_.Push(a + offset) ? EvalStatus::kOk : EvalStatus::kUnsupported;
  }

  EvalStatus Deref(uint64_t size) {
    uint64_t a = 0, v = 0;
    if (!st_.Pop(&a) || size == 0 || size > 8) return EvalStatus::kUnsupported;
    if (StackMemory::Result r = mem_.Read(a, &v); r != StackMemory::kOk) return FromRead(r);
    if (size < 8) v &= (uint64_t{1} << (8 * size)) - 1;
    return st_.Push(v) ? EvalStatus::kOk : EvalStatus::kUnsupported;
  }

  // The target is a byte offset in the original block: the op that starts
  // there (libdw keeps each op's offset).
  EvalStatus Jump(const Dwarf_Op& op, size_t* i) {
    const Dwarf_Word target = op.offset + 3 + static_cast<int16_t>(op.number);
    auto it = std::find_if(ops_.begin(), ops_.end(),
                           [&](const Dwarf_Op& o) { return o.offset == target; });
    if (it == ops_.end()) return EvalStatus::kUnsupported;
    *i = static_cast<size_t>(it - ops_.begin()) - 1;  // the loop adds one
    return EvalStatus::kOk;
  }

  absl::Span<const Dwarf_Op> ops_;
  const RegisterSet& regs_;
  const StackMemory& mem_;
  const uint64_t* cfa_;
  EvalStack st_;
};

}  // namespace

EvalStatus EvalExpression(absl::Span<const Dwarf_Op> ops, const RegisterSet& regs,
                          const StackMemory& mem, const uint64_t* cfa, uint64_t* result,
                          bool* is_value) {
  return Evaluator(ops, regs, mem, cfa).Run(result, is_value);
}

}  // namespace pageblame::unwind

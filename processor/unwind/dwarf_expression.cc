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

}  // namespace

EvalStatus EvalExpression(absl::Span<const Dwarf_Op> ops, const RegisterSet& regs,
                          const StackMemory& mem, const uint64_t* cfa, uint64_t* result,
                          bool* is_value) {
  EvalStack st;
  *is_value = false;
  int steps = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (++steps > kMaxSteps) return EvalStatus::kUnsupported;
    const Dwarf_Op& op = ops[i];
    const uint8_t atom = op.atom;
    uint64_t a, b, c;
    bool ok = true;
    if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31) {
      ok = st.Push(atom - DW_OP_lit0);
    } else if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31) {
      // libdw keeps the offset, a SLEB128, in `number`.
      if (!regs.Get(atom - DW_OP_breg0, &a)) return EvalStatus::kUnknownRegister;
      ok = st.Push(a + op.number);
    } else {
      switch (atom) {
        case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u: case DW_OP_const2s:
        case DW_OP_const4u: case DW_OP_const4s: case DW_OP_const8u: case DW_OP_const8s:
        case DW_OP_constu: case DW_OP_consts:
          ok = st.Push(op.number);
          break;
        case DW_OP_bregx:
          if (!regs.Get(static_cast<int>(op.number), &a)) return EvalStatus::kUnknownRegister;
          ok = st.Push(a + op.number2);
          break;
        case DW_OP_call_frame_cfa:
          if (cfa == nullptr) return EvalStatus::kUnsupported;
          ok = st.Push(*cfa);
          break;
        case DW_OP_dup:
          ok = st.Peek(0, &a) && st.Push(a);
          break;
        case DW_OP_drop:
          ok = st.Pop(&a);
          break;
        case DW_OP_over:
          ok = st.Peek(1, &a) && st.Push(a);
          break;
        case DW_OP_pick:
          ok = st.Peek(op.number, &a) && st.Push(a);
          break;
        case DW_OP_swap:
          ok = st.Pop(&a) && st.Pop(&b) && st.Push(a) && st.Push(b);
          break;
        case DW_OP_rot:
          ok = st.Pop(&a) && st.Pop(&b) && st.Pop(&c) && st.Push(a) && st.Push(c) && st.Push(b);
          break;
        case DW_OP_abs:
          ok = st.Pop(&a) && st.Push(static_cast<int64_t>(a) < 0 ? -a : a);
          break;
        case DW_OP_neg:
          ok = st.Pop(&a) && st.Push(-a);
          break;
        case DW_OP_not:
          ok = st.Pop(&a) && st.Push(~a);
          break;
        case DW_OP_plus_uconst:
          ok = st.Pop(&a) && st.Push(a + op.number);
          break;
        case DW_OP_deref:
        case DW_OP_deref_size: {
          const uint64_t size = atom == DW_OP_deref ? 8 : op.number;
          if (!st.Pop(&a) || size == 0 || size > 8) return EvalStatus::kUnsupported;
          uint64_t v;
          if (StackMemory::Result r = mem.Read(a, &v); r != StackMemory::kOk) return FromRead(r);
          if (size < 8) v &= (uint64_t{1} << (8 * size)) - 1;
          ok = st.Push(v);
          break;
        }
        case DW_OP_skip:
        case DW_OP_bra: {
          if (atom == DW_OP_bra) {
            if (!st.Pop(&a)) return EvalStatus::kUnsupported;
            if (a == 0) break;
          }
          // The target is a byte offset in the original block: the op
          // that starts there (libdw keeps each op's offset).
          const Dwarf_Word target = op.offset + 3 + static_cast<int16_t>(op.number);
          auto it = std::find_if(ops.begin(), ops.end(),
                                 [&](const Dwarf_Op& o) { return o.offset == target; });
          if (it == ops.end()) return EvalStatus::kUnsupported;
          i = static_cast<size_t>(it - ops.begin()) - 1;  // the loop adds one
          break;
        }
        case DW_OP_nop:
          break;
        case DW_OP_stack_value:
          // The result is the value on the stack, not a location; it must
          // be the last operation.
          if (i + 1 != ops.size()) return EvalStatus::kUnsupported;
          *is_value = true;
          break;
        default:
          if (!st.Pop(&b) || !st.Pop(&a) || !Binary(atom, a, b, &c)) {
            return EvalStatus::kUnsupported;
          }
          ok = st.Push(c);
          break;
      }
    }
    if (!ok) return EvalStatus::kUnsupported;
  }
  if (!st.Pop(result)) return EvalStatus::kUnsupported;
  return EvalStatus::kOk;
}

}  // namespace pageblame::unwind

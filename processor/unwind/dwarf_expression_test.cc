// The CFI expression evaluator on hand-made operation lists: what glibc's
// and GCC's CFI use (register + offset, deref, the PLT's branchy rule), the
// stack operations, and the ways an expression can be refused.
#include "processor/unwind/dwarf_expression.h"

#include <dwarf.h>

#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace pageblame::unwind {
namespace {

// An operation at byte `offset` of its block (branches target offsets).
Dwarf_Op Op(uint8_t atom, Dwarf_Word number = 0, Dwarf_Word number2 = 0, Dwarf_Word offset = 0) {
  Dwarf_Op op;
  std::memset(&op, 0, sizeof(op));
  op.atom = atom;
  op.number = number;
  op.number2 = number2;
  op.offset = offset;
  return op;
}

struct Eval {
  EvalStatus status;
  uint64_t value;
  bool is_value;
};

Eval Evaluate(const std::vector<Dwarf_Op>& ops, const uint64_t* cfa = nullptr) {
  RegisterSet regs;
  regs.Set(x86_64::kRsp, 0x7000);
  regs.Set(6, 0x1234);  // rbp
  static const uint64_t kStack[4] = {0x1111, 0x2222, 0xdeadbeefcafef00d, 0x4444};
  StackMemory mem(0x7000, absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(kStack), 32));
  Eval e{EvalStatus::kOk, 0, false};
  e.status = EvalExpression(ops, regs, mem, cfa, &e.value, &e.is_value);
  return e;
}

TEST(DwarfExpressionTest, RegisterPlusOffsetThenDerefIsTheSavedValuesAddress) {
  // DW_OP_breg7 (rsp) 8; DW_OP_deref: the word at rsp+8.
  Eval e = Evaluate({Op(DW_OP_breg7, 8), Op(DW_OP_deref)});
  ASSERT_EQ(e.status, EvalStatus::kOk);
  EXPECT_EQ(e.value, 0x2222u);
  EXPECT_FALSE(e.is_value);
  e = Evaluate({Op(DW_OP_bregx, 6, 0x10)});  // rbp + 16
  ASSERT_EQ(e.status, EvalStatus::kOk);
  EXPECT_EQ(e.value, 0x1244u);
  e = Evaluate({Op(DW_OP_breg7, 16), Op(DW_OP_deref_size, 2)});
  ASSERT_EQ(e.status, EvalStatus::kOk);
  EXPECT_EQ(e.value, 0xf00du);
}

TEST(DwarfExpressionTest, ThePltRuleBranchesOnTheIp) {
  // GCC's rule for the PLT: rsp + 8 + ((ip & 15) >= 11 ? 8 : 0), written as
  // breg7 8; breg16 0; lit15; and; lit11; ge; lit3; shl; plus. rip is
  // register 16, which this frame does not know: refused as such.
  const std::vector<Dwarf_Op> plt = {Op(DW_OP_breg7, 8), Op(DW_OP_bregx, 16, 0), Op(DW_OP_lit15),
                                     Op(DW_OP_and),      Op(DW_OP_lit11),       Op(DW_OP_ge),
                                     Op(DW_OP_lit3),     Op(DW_OP_shl),         Op(DW_OP_plus)};
  EXPECT_EQ(Evaluate(plt).status, EvalStatus::kUnknownRegister);
  // A branch: lit1; bra +1 (over the lit5 at offset 3) ; lit5; lit7 → 7.
  Eval e = Evaluate({Op(DW_OP_lit1, 0, 0, 0), Op(DW_OP_bra, 1, 0, 1), Op(DW_OP_lit5, 0, 0, 4),
                Op(DW_OP_lit7, 0, 0, 5)});
  ASSERT_EQ(e.status, EvalStatus::kOk);
  EXPECT_EQ(e.value, 7u);
  // Not taken on 0: lit0; bra +1; lit5; plus nothing → 5 is on top.
  e = Evaluate({Op(DW_OP_lit0, 0, 0, 0), Op(DW_OP_bra, 1, 0, 1), Op(DW_OP_lit5, 0, 0, 4)});
  ASSERT_EQ(e.status, EvalStatus::kOk);
  EXPECT_EQ(e.value, 5u);
  // A target between operations is refused.
  EXPECT_EQ(Evaluate({Op(DW_OP_skip, 7, 0, 0), Op(DW_OP_lit1, 0, 0, 3)}).status,
            EvalStatus::kUnsupported);
}

TEST(DwarfExpressionTest, StackOperationsAndArithmetic) {
  EXPECT_EQ(Evaluate({Op(DW_OP_lit2), Op(DW_OP_lit5), Op(DW_OP_swap), Op(DW_OP_minus)}).value, 3u);
  EXPECT_EQ(Evaluate({Op(DW_OP_lit2), Op(DW_OP_lit5), Op(DW_OP_over), Op(DW_OP_mul)}).value, 10u);
  EXPECT_EQ(Evaluate({Op(DW_OP_lit1), Op(DW_OP_lit2), Op(DW_OP_lit3), Op(DW_OP_rot)}).value, 2u);
  EXPECT_EQ(Evaluate({Op(DW_OP_lit4), Op(DW_OP_lit9), Op(DW_OP_pick, 1)}).value, 4u);
  EXPECT_EQ(Evaluate({Op(DW_OP_consts, static_cast<Dwarf_Word>(-6)), Op(DW_OP_abs)}).value, 6u);
  EXPECT_EQ(Evaluate({Op(DW_OP_lit7), Op(DW_OP_dup), Op(DW_OP_plus_uconst, 1), Op(DW_OP_plus)}).value,
            15u);
  EXPECT_EQ(Evaluate({Op(DW_OP_lit7), Op(DW_OP_lit0), Op(DW_OP_div)}).status,
            EvalStatus::kUnsupported)
      << "division by zero";
  const uint64_t cfa = 0x9000;
  Eval e = Evaluate({Op(DW_OP_call_frame_cfa), Op(DW_OP_lit8), Op(DW_OP_minus)}, &cfa);
  ASSERT_EQ(e.status, EvalStatus::kOk);
  EXPECT_EQ(e.value, 0x8ff8u);
  EXPECT_EQ(Evaluate({Op(DW_OP_call_frame_cfa)}).status, EvalStatus::kUnsupported)
      << "no CFA while the CFA itself is computed";
}

TEST(DwarfExpressionTest, StackValueAndItsPlace) {
  Eval e = Evaluate({Op(DW_OP_breg7, 0), Op(DW_OP_stack_value)});
  ASSERT_EQ(e.status, EvalStatus::kOk);
  EXPECT_TRUE(e.is_value);
  EXPECT_EQ(e.value, 0x7000u);
  EXPECT_EQ(Evaluate({Op(DW_OP_lit1), Op(DW_OP_stack_value), Op(DW_OP_lit2)}).status,
            EvalStatus::kUnsupported);
}

TEST(DwarfExpressionTest, ReadsOutsideTheCopyAndBadStacksAreRefused) {
  EXPECT_EQ(Evaluate({Op(DW_OP_breg7, static_cast<Dwarf_Word>(-8)), Op(DW_OP_deref)}).status,
            EvalStatus::kBelowCopy);
  EXPECT_EQ(Evaluate({Op(DW_OP_breg7, 32), Op(DW_OP_deref)}).status, EvalStatus::kPastCopy);
  EXPECT_EQ(Evaluate({Op(DW_OP_drop)}).status, EvalStatus::kUnsupported);
  EXPECT_EQ(Evaluate({}).status, EvalStatus::kUnsupported) << "nothing on the stack at the end";
  EXPECT_EQ(Evaluate({Op(DW_OP_breg7, 0), Op(DW_OP_deref_size, 9)}).status, EvalStatus::kUnsupported);
  // A loop: skip back to itself runs until the step bound.
  EXPECT_EQ(Evaluate({Op(DW_OP_skip, static_cast<Dwarf_Word>(-3), 0, 0)}).status,
            EvalStatus::kUnsupported);
  // Past the stack's depth.
  std::vector<Dwarf_Op> deep(100, Op(DW_OP_lit1));
  EXPECT_EQ(Evaluate(deep).status, EvalStatus::kUnsupported);
}

}  // namespace
}  // namespace pageblame::unwind

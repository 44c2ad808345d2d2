// Evaluates the DWARF expressions CFI uses (DW_CFA_def_cfa_expression,
// DW_CFA_expression, DW_CFA_val_expression), in libdw's decoded form
// (Dwarf_Op, as dwarf_frame_cfa / dwarf_frame_register hand them out), over
// a frame's registers and the copied stack. Most rules are simpler
// ("CFA = rsp + 8", "rbp at CFA - 16") and FrameRule applies them without
// this; expressions are what is left: PLT entries' CFA, signal frames,
// hand-written assembly.
//
//   uint64_t v;
//   bool is_value;
//   EvalStatus s = EvalExpression(ops, regs, mem, &cfa, &v, &is_value);
//   // is_value false: v is the address of the saved register (read it).
//
// The operations of libgcc's execute_stack_op that CFI can use, as libdwfl's
// expr_eval (libdwfl/frame_unwind.c) takes them; DW_OP_call_frame_cfa pushes
// `cfa` (null while the CFA itself is being computed). Bounded: at most
// kMaxSteps operations (branches may loop) and kMaxDepth stack entries.
#ifndef PAGEBLAME_UNWIND_DWARF_EXPRESSION_H_
#define PAGEBLAME_UNWIND_DWARF_EXPRESSION_H_

#include <elfutils/libdw.h>

#include <cstdint>

#include "absl/types/span.h"
#include "processor/unwind/register_set.h"
#include "processor/unwind/stack_memory.h"

namespace pageblame::unwind {

enum class EvalStatus {
  kOk,
  kBelowCopy,       // a DW_OP_deref below the copied stack
  kPastCopy,        // a DW_OP_deref past the copied stack's end
  kUnknownRegister, // a register the frame does not know
  kUnsupported,     // an operation CFI does not use, a bad branch, stack misuse
};

EvalStatus EvalExpression(absl::Span<const Dwarf_Op> ops, const RegisterSet& regs,
                          const StackMemory& mem, const uint64_t* cfa, uint64_t* result,
                          bool* is_value);

}  // namespace pageblame::unwind

#endif  // PAGEBLAME_UNWIND_DWARF_EXPRESSION_H_

// The user registers of a --call-graph dwarf sample (PERF_SAMPLE_REGS_USER),
// in DWARF numbering: the unwinder's first frame.
//
//   RegisterSet regs;
//   if (ReadSampleRegisters(sample, &regs) == RegsResult::kOk) ...  // regs.pc(), regs.sp()
//
// Only x86-64 samples of 64-bit code can be unwound (REGS_USER abi 64):
// another abi (a 32-bit process), a mask without ip or sp, or a trace of
// another architecture give no registers. perf's own check is the same
// (perf_reg_value() fails for a register the mask lacks).
#ifndef PAGEBLAME_UNWIND_SAMPLE_REGISTERS_H_
#define PAGEBLAME_UNWIND_SAMPLE_REGISTERS_H_

#include "processor/perf/perf_records.h"
#include "processor/unwind/register_set.h"

namespace pageblame::unwind {

enum class RegsResult {
  kOk,
  kNone,         // the sample has no user registers (abi none, or a cut copy)
  kOtherAbi,     // REGS_USER abi is not 64-bit x86 (or the trace is not x86_64)
  kMaskLacksIpSp,  // attr.sample_regs_user has no ip or no sp
};

// `x86_64` says whether the trace was recorded on x86_64 (FileInfo::arch).
RegsResult ReadSampleRegisters(const perf::Sample& sample, bool x86_64, RegisterSet* out);

}  // namespace pageblame::unwind

#endif  // PAGEBLAME_UNWIND_SAMPLE_REGISTERS_H_

// x86-64 register numbers as DWARF CFI names them (the psABI's "DWARF
// Register Number Mapping", which libdw's CFI uses), and where perf's
// REGS_USER puts them (arch/x86/include/uapi/asm/perf_regs.h: one u64 per
// bit of attr.sample_regs_user, lowest bit first).
#ifndef PAGEBLAME_UNWIND_X86_64_REGISTERS_H_
#define PAGEBLAME_UNWIND_X86_64_REGISTERS_H_

#include <cstdint>

namespace pageblame::unwind::x86_64 {

// DWARF numbers 0..16. The return address column (16) holds the pc: after a
// step it is the caller's pc, as libdwfl has it.
enum DwarfReg : uint8_t {
  kRax = 0, kRdx = 1, kRcx = 2, kRbx = 3, kRsi = 4, kRdi = 5, kRbp = 6, kRsp = 7,
  kR8 = 8, kR9, kR10, kR11, kR12, kR13, kR14, kR15,
  kRip = 16,
};
inline constexpr int kNumRegs = 17;
// The highest register number CFI may name. The psABI's table stops at 145
// (APX's r16-r31 took 130-145); the rest of the 0-255 range is left for what
// it may add. libdw grows a frame's rule table to the largest number an FDE
// names (16 bytes each): a corrupt 2^27 cost 1 GB, 255 costs 4 KiB.
inline constexpr uint64_t kMaxCfiRegister = 255;

// perf's PERF_REG_X86_* index of each DWARF register (perf_regs.h: AX 0,
// BX 1, CX 2, DX 3, SI 4, DI 5, BP 6, SP 7, IP 8, FLAGS 9, CS..GS 10-15,
// R8..R15 16-23).
inline constexpr uint8_t kPerfRegOf[kNumRegs] = {
    0 /*ax*/, 3 /*dx*/, 2 /*cx*/, 1 /*bx*/, 4 /*si*/, 5 /*di*/, 6 /*bp*/, 7 /*sp*/,
    16, 17, 18, 19, 20, 21, 22, 23 /*r8..r15*/, 8 /*ip*/};
inline constexpr uint8_t kPerfRegSp = 7;
inline constexpr uint8_t kPerfRegIp = 8;

}  // namespace pageblame::unwind::x86_64

#endif  // PAGEBLAME_UNWIND_X86_64_REGISTERS_H_

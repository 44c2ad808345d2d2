// Checks a whole .eh_frame or .debug_frame section before libdw runs any of
// its programs: every CIE and FDE must parse, and every register its CFA
// instructions name must be at most x86_64::kMaxCfiRegister. libdw's CFI
// interpreter (cfi.c) grows the frame's register table to the largest
// number it meets, up to 2^28 entries: one DW_CFA_offset_extended naming
// register 2^27 cost 1 GB and 4 s per pc looked up in its FDE.
//
//   Elf_Data* data = elf_getdata(eh_frame_scn, nullptr);
//   if (!CfiRegisterCheck::Check(elf_getident(elf, nullptr), data, /*eh_frame=*/true)) {
//     // do not hand this section to libdw
//   }
//
// An entry it cannot decode (an unknown opcode, augmentation or pointer
// encoding: none that GCC, LLVM or hand-written assembly emit for x86-64)
// fails the check too: what follows such an entry cannot be vouched for.
// Cost: one pass over the section, ~1 ms per MB (2015 .eh_frame and
// .debug_frame sections of a Debian system, 135 MB: 146 ms, none refused).
#ifndef PAGEBLAME_UNWIND_CFI_REGISTER_CHECK_H_
#define PAGEBLAME_UNWIND_CFI_REGISTER_CHECK_H_

#include <elfutils/libdw.h>

#include <cstdint>

#include "absl/status/status.h"

namespace pageblame::unwind {

class CfiRegisterCheck {
 public:
  // OK, or InvalidArgument saying which entry (section offset) and why.
  static absl::Status Check(const unsigned char* e_ident, Elf_Data* data, bool eh_frame);
};

}  // namespace pageblame::unwind

#endif  // PAGEBLAME_UNWIND_CFI_REGISTER_CHECK_H_

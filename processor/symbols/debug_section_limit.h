// Whether libdw may open an ELF file's DWARF, judged from its section
// headers alone: a compressed debug section states how big it inflates to
// (SHF_COMPRESSED: the Elf64_Chdr's ch_size; a GNU .zdebug_* section: "ZLIB"
// and an 8-byte big-endian size), and dwarf_begin_elf inflates every debug
// section whole as it opens the file (libdw's check_section -> elf_compress),
// allocating what the header claims. A 2 MB file claiming 2 GiB cost 2 GiB of
// memory and 7 s before this check.
//
//   if (absl::Status s = DebugSectionLimit::Check(elf, file_size); !s.ok()) {
//     // skip the file's DWARF; s.message() says which section claims what
//   }
//
// The rule: the sizes all compressed sections claim, added up, may not pass
// max(kFloorBytes, kMaxRatio x the file's size). Real DWARF shrinks 3-10x
// with zlib or zstd; 64x leaves room for that and bounds the memory libdw can
// be made to take by the input's size. Reads only section headers and the
// first bytes of each compressed section (libelf's raw data, not inflated).
#ifndef PAGEBLAME_SYMBOLS_DEBUG_SECTION_LIMIT_H_
#define PAGEBLAME_SYMBOLS_DEBUG_SECTION_LIMIT_H_

#include <libelf.h>

#include <cstdint>

#include "absl/status/status.h"

namespace pageblame::symbols {

class DebugSectionLimit {
 public:
  static constexpr uint64_t kMaxRatio = 64;
  static constexpr uint64_t kFloorBytes = uint64_t{64} << 20;

  // The most the compressed sections of a file of `file_size` bytes may claim.
  static uint64_t LimitFor(uint64_t file_size);

  // OK if the claimed sizes fit; ResourceExhausted naming the largest claim
  // otherwise (also for a compressed section whose header cannot be read:
  // libdw would fail on it anyway).
  static absl::Status Check(Elf* elf, uint64_t file_size);
};

}  // namespace pageblame::symbols

#endif  // PAGEBLAME_SYMBOLS_DEBUG_SECTION_LIMIT_H_

// CoreAddressCheck: what a core's PT_LOAD segments and NT_FILE entries must
// be to stand for a process's memory, checked before they become regions:
// page-aligned bounds (every Linux page size is a multiple of 4 KiB, and the
// kernel, gdb's gcore and createdump write whole VMAs), inside the user
// address range of the core's machine, and no two of a kind overlapping (two
// mappings at one address). A corrupt entry otherwise became a region of
// 16 EiB, or ten 3-byte pieces, in a diff documented as page-exact.
//
//   RETURN_IF_ERROR(CoreAddressCheck::CheckLoads(loads, EM_X86_64, /*is64=*/true));
//
// The user address range ends at 2^47 on x86-64 (4-level paging; a program
// on a 5-level kernel that asks for addresses above it is not supported),
// 2^52 on aarch64, 2^32 for 32-bit cores, and at 2^64 elsewhere. The one
// exception is x86-64's [vsyscall] page at 0xffffffffff600000, which kernel
// and gcore cores include as a PT_LOAD (exempt from the range check only:
// it must not overlap another PT_LOAD either). Empty PT_LOADs are not checked (the
// parser skips them). Errors are InvalidArgument naming the program header
// or NT_FILE entry (1-based); the caller adds the file's name.
#ifndef PAGEBLAME_REGIONS_CORE_ADDRESS_CHECK_H_
#define PAGEBLAME_REGIONS_CORE_ADDRESS_CHECK_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "processor/regions/elf_core_reader.h"
#include "processor/regions/nt_file_note.h"

namespace pageblame::regions {

class CoreAddressCheck {
 public:
  static constexpr uint64_t kVsyscallPage = 0xffffffffff600000;

  // The first address past user space for a core of this e_machine and class.
  static uint64_t UserAddressEnd(uint16_t machine, bool is64);

  static absl::Status CheckLoads(const std::vector<LoadSegment>& loads, uint16_t machine,
                                 bool is64);
  static absl::Status CheckFiles(const std::vector<FileMapping>& files, uint16_t machine,
                                 bool is64);
};

}  // namespace pageblame::regions

#endif  // PAGEBLAME_REGIONS_CORE_ADDRESS_CHECK_H_

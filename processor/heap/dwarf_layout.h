// DwarfLayout: a GlibcLayout read from the DWARF of libc's debug file (the
// libc6-dbg / glibc-debuginfo file found by build id), so that the walker
// reads exactly the build the target runs, whatever its version or patches.
//
//   ASSIGN_OR_RETURN(GlibcLayout l, DwarfLayout::Read("/usr/lib/debug/.build-id/93/ac61...debug", 2, 36));
//
// Read with libdw: the struct definitions malloc_state, malloc_par,
// _heap_info, tcache_perthread_struct and tcache_entry (the compile unit of
// malloc/malloc.c first, which includes arena.c), each member's
// DW_AT_data_member_location, array sizes from the types. The version-only
// rules (what a tcache key holds, safe-linking) come from `major.minor`.
// A struct or member that is missing is an error naming it: the caller then
// falls back to the built-in table.
#ifndef PAGEBLAME_HEAP_DWARF_LAYOUT_H_
#define PAGEBLAME_HEAP_DWARF_LAYOUT_H_

#include <string>

#include "absl/status/statusor.h"
#include "processor/heap/glibc_layout.h"

namespace pageblame::heap {

class DwarfLayout {
 public:
  static absl::StatusOr<GlibcLayout> Read(const std::string& debug_path, int major, int minor);
};

}  // namespace pageblame::heap

#endif  // PAGEBLAME_HEAP_DWARF_LAYOUT_H_

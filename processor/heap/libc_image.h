// LibcImage: glibc's libc as mapped in the target — its file, build id,
// version, the structure layouts of its malloc and the addresses of
// main_arena, mp_ and tcache_key in the target, when symbols give them.
//
//   ASSIGN_OR_RETURN(LibcImage libc, LibcImage::Load(memory, "/usr/lib/x86_64-linux-gnu/libc.so.6",
//                                                    base, options));
//   libc.layout.Version() == "2.36"; libc.main_arena (target address, if known)
//
// The file is read through TargetMemory::HostPath (a live process's own
// root), and refused if its build id is not the one in the target's memory
// (a core from another machine, a libc upgraded since the process started). Its debug file is looked for by build id in each debug directory
// (DIR/.build-id/xx/rest.debug; /usr/lib/debug by default: libc6-dbg,
// glibc-debuginfo). Layouts: from the debug file's DWARF when there is
// one, else the built-in table for the banner's version (glibc_layout.h);
// symbols from libc's own .symtab, else the debug file's. With
// `use_debug_info` false neither the debug file nor any .symtab is used
// (the table and the signature scan, arena_locator.h, as on a machine
// without debug files).
#ifndef PAGEBLAME_HEAP_LIBC_IMAGE_H_
#define PAGEBLAME_HEAP_LIBC_IMAGE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "processor/heap/glibc_layout.h"
#include "processor/heap/heap_snapshot.h"
#include "processor/heap/target_memory.h"

namespace pageblame::heap {

struct LibcOptions {
  bool use_debug_info = true;
  std::vector<std::string> debug_dirs = {"/usr/lib/debug"};
};

struct LibcImage {
  std::string path;          // as the target names it
  std::string build_id_hex;
  uint64_t bias = 0;         // target address = link-time address + bias
  GlibcLayout layout;
  LayoutSource source = LayoutSource::kNone;
  std::string layout_from;   // the debug file, or "built-in table for glibc 2.36"
  std::optional<uint64_t> main_arena, mp, tcache_key;  // target addresses, from symbols

  // An error when the file cannot be read or its version is neither known
  // from DWARF nor in the table.
  static absl::StatusOr<LibcImage> Load(const TargetMemory& memory, const std::string& path, uint64_t base,
                                        const LibcOptions& options);
};

}  // namespace pageblame::heap

#endif  // PAGEBLAME_HEAP_LIBC_IMAGE_H_

// ElfFacts: what the heap walker needs to know of one ELF file of the
// target (libc, its debug file, another library): its build id, the lowest
// PT_LOAD address (to turn link-time addresses into the target's), the
// addresses of a few named data symbols (.symtab, then .dynsym), whether it
// exports a function, and glibc's version string.
//
//   ASSIGN_OR_RETURN(ElfFacts f, ElfFacts::Read("/usr/lib/x86_64-linux-gnu/libc.so.6",
//                                               {"main_arena", "mp_", "tcache_key"}));
//   std::optional<uint64_t> a = f.Symbol("main_arena");   // link-time address
//   f.version == "2.36"    // from "... release version 2.36." in its bytes
//
// libelf parses (bounds-checked); the file is opened read-only and read once.
#ifndef PAGEBLAME_HEAP_ELF_FACTS_H_
#define PAGEBLAME_HEAP_ELF_FACTS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace pageblame::heap {

struct ElfFacts {
  std::string path;
  std::string build_id;      // raw bytes; "" if none
  uint64_t first_load = 0;   // lowest PT_LOAD p_vaddr, page-aligned down
  std::map<std::string, uint64_t> symbols;  // the wanted ones found (st_value)
  std::set<std::string> exported;           // wanted functions defined in .dynsym
  std::string version;       // glibc's "2.36", if the file holds its banner
  bool has_symtab = false;

  // `symbols`: data symbols to look up; `functions`: exported functions
  // whose definition to check; `version`: scan for glibc's banner.
  static absl::StatusOr<ElfFacts> Read(const std::string& path, const std::set<std::string>& symbols,
                                       const std::set<std::string>& functions, bool version);
  std::optional<uint64_t> Symbol(const std::string& name) const;
};

// glibc's version from its banner "GNU C Library (...) stable release
// version 2.36." (or "release version 2.28,"); "" if absent.
std::string GlibcVersionIn(const std::string& bytes);

}  // namespace pageblame::heap

#endif  // PAGEBLAME_HEAP_ELF_FACTS_H_

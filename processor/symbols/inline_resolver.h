// Which functions were inlined at an address of one ELF file, from its
// DWARF debug info (the separate debug file, else the binary's own), as
// perf shows them ("inline_big_buffer (inlined)" above the function that
// holds the code): libdw's dwarf_addrdie finds the compile unit, and
// dwarf_getscopes the nest of scopes at the address, whose
// DW_TAG_inlined_subroutine entries are the inlined calls.
//
//   std::unique_ptr<InlineResolver> r = InlineResolver::Open(location);  // null: no .debug_info
//   std::vector<std::string> names = r->InlinedAt(vaddr);  // innermost first
//
// Names are the functions' linkage names demangled as perf prints them
// (demangle.h), else their DW_AT_name. Opening reads only the section
// headers; each lookup reads the unit it falls in (libdw keeps what it read).
#ifndef PAGEBLAME_SYMBOLS_INLINE_RESOLVER_H_
#define PAGEBLAME_SYMBOLS_INLINE_RESOLVER_H_

#include <elfutils/libdw.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "processor/symbols/dso_locator.h"
#include "processor/symbols/elf_handle.h"

namespace pageblame::symbols {

class InlineResolver {
 public:
  // A file whose compressed debug sections claim more than
  // DebugSectionLimit allows is skipped before libdw inflates anything; if
  // `refused` is given, it gets "path: why" for the last one skipped.
  static std::unique_ptr<InlineResolver> Open(const DsoLocation& loc, bool demangle_params,
                                              std::string* refused = nullptr);
  ~InlineResolver();
  InlineResolver(const InlineResolver&) = delete;
  InlineResolver& operator=(const InlineResolver&) = delete;

  // The functions inlined at `vaddr`, innermost first; empty if none or
  // the address is in no unit with debug info.
  std::vector<std::string> InlinedAt(uint64_t vaddr) const;

 private:
  InlineResolver(ElfHandle elf, Dwarf* dwarf, bool demangle_params)
      : elf_(std::move(elf)), dwarf_(dwarf), demangle_params_(demangle_params) {}

  ElfHandle elf_;
  Dwarf* dwarf_;
  bool demangle_params_;
};

}  // namespace pageblame::symbols

#endif  // PAGEBLAME_SYMBOLS_INLINE_RESOLVER_H_

#include "processor/symbols/inline_resolver.h"

#include <dwarf.h>
#include <gelf.h>

#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "processor/symbols/debug_section_limit.h"
#include "processor/symbols/demangle.h"

namespace pageblame::symbols {
namespace {

bool HasDebugInfo(Elf* elf) {
  size_t strndx = 0;
  if (elf_getshdrstrndx(elf, &strndx) != 0) return false;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type == SHT_NOBITS) continue;
    const char* n = elf_strptr(elf, strndx, shdr.sh_name);
    if (n != nullptr && std::strcmp(n, ".debug_info") == 0) return true;
  }
  return false;
}

// The name of the function an inlined_subroutine DIE stands for: through
// DW_AT_abstract_origin (dwarf_attr_integrate follows it and
// DW_AT_specification), its linkage name if it has one, else its name.
std::optional<std::string> FunctionName(Dwarf_Die* die, bool params) {
  Dwarf_Attribute attr;
  for (int at : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name}) {
    if (dwarf_attr_integrate(die, at, &attr) != nullptr) {
      if (const char* s = dwarf_formstring(&attr)) return Demangle(s, params);
    }
  }
  if (dwarf_attr_integrate(die, DW_AT_name, &attr) != nullptr) {
    if (const char* s = dwarf_formstring(&attr)) return std::string(s);
  }
  return std::nullopt;
}

}  // namespace

std::unique_ptr<InlineResolver> InlineResolver::Open(const DsoLocation& loc, bool demangle_params,
                                                     std::string* refused) {
  for (const std::string* path : {&loc.debug_path, &loc.elf_path}) {
    if (path->empty()) continue;
    absl::StatusOr<ElfHandle> elf = ElfHandle::Open(*path);
    if (!elf.ok() || !HasDebugInfo(elf->elf())) continue;
    // dwarf_begin_elf inflates every compressed debug section at once.
    if (absl::Status s = DebugSectionLimit::Check(elf->elf(), elf->file_size()); !s.ok()) {
      if (refused != nullptr) *refused = absl::StrCat(*path, ": ", s.message());
      continue;
    }
    Dwarf* dwarf = dwarf_begin_elf(elf->elf(), DWARF_C_READ, nullptr);
    if (dwarf == nullptr) continue;
    return std::unique_ptr<InlineResolver>(
        new InlineResolver(std::move(*elf), dwarf, demangle_params));
  }
  return nullptr;
}

InlineResolver::~InlineResolver() { dwarf_end(dwarf_); }

std::vector<std::string> InlineResolver::InlinedAt(uint64_t vaddr) const {
  std::vector<std::string> names;
  Dwarf_Die cu;
  if (dwarf_addrdie(dwarf_, vaddr, &cu) == nullptr) return names;
  Dwarf_Die* scopes = nullptr;
  const int n = dwarf_getscopes(&cu, vaddr, &scopes);
  for (int i = 0; i < n; ++i) {
    if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine) continue;
    names.push_back(FunctionName(&scopes[i], demangle_params_).value_or("[unknown]"));
  }
  std::free(scopes);
  return names;
}

}  // namespace pageblame::symbols

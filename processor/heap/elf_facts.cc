#include "processor/heap/elf_facts.h"

#include <gelf.h>

#include <cctype>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "processor/base/input_file.h"
#include "processor/base/status_macros.h"
#include "processor/symbols/elf_handle.h"

namespace pageblame::heap {
namespace {

// Looks the wanted names up in one symbol table section.
void ScanSymbols(Elf* elf, Elf_Scn* scn, const GElf_Shdr& shdr, const std::set<std::string>& symbols,
                 const std::set<std::string>& functions, ElfFacts* f) {
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (data == nullptr || shdr.sh_entsize == 0) return;
  const size_t n = shdr.sh_size / shdr.sh_entsize;
  for (size_t i = 0; i < n; ++i) {
    GElf_Sym sym;
    if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) break;
    const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
    if (name == nullptr || *name == '\0') continue;
    if (sym.st_shndx == SHN_UNDEF) continue;
    const int type = GELF_ST_TYPE(sym.st_info);
    if (type == STT_OBJECT && symbols.count(name) && !f->symbols.count(name)) f->symbols[name] = sym.st_value;
    if ((type == STT_FUNC || type == STT_GNU_IFUNC) && shdr.sh_type == SHT_DYNSYM && functions.count(name))
      f->exported.insert(name);
  }
}

}  // namespace

std::string GlibcVersionIn(const std::string& bytes) {
  static constexpr char kBanner[] = "release version ";
  for (size_t at = bytes.find(kBanner); at != std::string::npos; at = bytes.find(kBanner, at + 1)) {
    // The banner starts "GNU C Library" earlier on the same line.
    const size_t line = bytes.rfind('\n', at);
    const size_t from = line == std::string::npos ? 0 : line;
    if (bytes.find("GNU C Library", from) > at) continue;
    const size_t start = at + sizeof(kBanner) - 1;
    size_t i = start;
    while (i < bytes.size() && (std::isdigit(static_cast<unsigned char>(bytes[i])) || bytes[i] == '.')) ++i;
    std::string v = bytes.substr(start, i - start);
    while (!v.empty() && v.back() == '.') v.pop_back();
    if (!v.empty() && v.find('.') != std::string::npos) return v;
  }
  return "";
}

absl::StatusOr<ElfFacts> ElfFacts::Read(const std::string& path, const std::set<std::string>& symbols,
                                        const std::set<std::string>& functions, bool version) {
  ASSIGN_OR_RETURN(symbols::ElfHandle h, symbols::ElfHandle::Open(path));
  ElfFacts f;
  f.path = path;
  f.build_id = h.BuildId();
  size_t phnum = 0;
  bool first = true;
  if (elf_getphdrnum(h.elf(), &phnum) == 0) {
    for (size_t i = 0; i < phnum; ++i) {
      GElf_Phdr p;
      if (gelf_getphdr(h.elf(), static_cast<int>(i), &p) == nullptr || p.p_type != PT_LOAD) continue;
      const uint64_t v = p.p_vaddr & ~uint64_t{4095};
      if (first || v < f.first_load) f.first_load = v;
      first = false;
    }
  }
  // .symtab first (local symbols such as main_arena live only there).
  for (int pass = 0; pass < 2; ++pass) {
    for (Elf_Scn* scn = elf_nextscn(h.elf(), nullptr); scn != nullptr; scn = elf_nextscn(h.elf(), scn)) {
      GElf_Shdr shdr;
      if (gelf_getshdr(scn, &shdr) == nullptr) continue;
      if (shdr.sh_type != (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM)) continue;
      if (pass == 0) f.has_symtab = true;
      ScanSymbols(h.elf(), scn, shdr, symbols, functions, &f);
    }
  }
  if (version) {
    ASSIGN_OR_RETURN(std::string bytes, InputFile::ReadWhole(path, "libc", InputFile::Accept::kRegular));
    f.version = GlibcVersionIn(bytes);
  }
  return f;
}

std::optional<uint64_t> ElfFacts::Symbol(const std::string& name) const {
  auto it = symbols.find(name);
  if (it == symbols.end()) return std::nullopt;
  return it->second;
}

}  // namespace pageblame::heap

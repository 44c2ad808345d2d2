#include "processor/symbols/test_util.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace pageblame::symbols::testing {

__attribute__((noinline)) int MarkerFunction(int x) {
  // Something the compiler cannot fold away, so the function keeps a body.
  asm volatile("" : "+r"(x));
  return x * 3 + 1;
}

void WriteFile(const std::string& path, const std::string& contents) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
  if (!out) ADD_FAILURE() << "cannot write " << path;
}

void MakeSymlink(const std::string& target, const std::string& link) {
  std::filesystem::create_directories(std::filesystem::path(link).parent_path());
  std::error_code ec;
  std::filesystem::create_symlink(target, link, ec);
  if (ec) ADD_FAILURE() << "symlink " << link << ": " << ec.message();
}

std::vector<SelfMapping> ReadSelfMaps() {
  std::vector<SelfMapping> maps;
  std::ifstream in("/proc/self/maps");
  std::string line;
  while (std::getline(in, line)) {
    // start-end perms offset dev inode [path]
    std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.size() < 5) continue;
    std::vector<std::string> range = absl::StrSplit(f[0], '-');
    SelfMapping m;
    if (range.size() != 2 || !absl::SimpleHexAtoi(range[0], &m.start) ||
        !absl::SimpleHexAtoi(range[1], &m.end) || !absl::SimpleHexAtoi(f[2], &m.pgoff)) {
      continue;
    }
    m.perms = f[1];
    if (f.size() >= 6) m.path = f[5];
    maps.push_back(m);
  }
  return maps;
}

std::optional<SelfMapping> SelfMappingFor(uint64_t addr) {
  for (const SelfMapping& m : ReadSelfMaps()) {
    if (addr >= m.start && addr < m.end) return m;
  }
  return std::nullopt;
}

namespace {

struct ElfCloser {
  Elf* elf;
  int fd;
  ~ElfCloser() {
    if (elf) elf_end(elf);
    if (fd >= 0) close(fd);
  }
};

uint64_t AlignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace

absl::Status WriteTestElf(const std::string& path, const TestElf& spec) {
  if (elf_version(EV_CURRENT) == EV_NONE) return absl::InternalError("libelf");
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  ElfCloser h{nullptr, open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
  if (h.fd < 0) return absl::InternalError(absl::StrCat("open ", path));
  h.elf = elf_begin(h.fd, ELF_C_WRITE, nullptr);
  if (h.elf == nullptr) return absl::InternalError(elf_errmsg(-1));
  elf_flagelf(h.elf, ELF_C_SET, ELF_F_LAYOUT);  // we choose every offset

  // Section contents (kept alive until elf_update writes them).
  std::vector<char> text(spec.text_size, '\x90');
  std::vector<char> data(0x100, 0);
  std::string note;
  if (!spec.build_id.empty()) {
    Elf64_Nhdr nhdr{4, static_cast<Elf64_Word>(spec.build_id.size()), NT_GNU_BUILD_ID};
    note.append(reinterpret_cast<const char*>(&nhdr), sizeof(nhdr));
    note.append("GNU\0", 4);
    note.append(spec.build_id);
    note.resize(AlignUp(note.size(), 4), '\0');
  }
  std::string strtab(1, '\0');
  std::vector<Elf64_Sym> syms(1);  // index 0: the null symbol
  std::vector<TestSymbol> sorted = spec.symbols;
  std::stable_sort(sorted.begin(), sorted.end(), [](const TestSymbol& a, const TestSymbol& b) {
    return (a.bind == STB_LOCAL) > (b.bind == STB_LOCAL);  // locals first (ELF gABI)
  });
  Elf64_Word first_global = 0;
  for (const TestSymbol& s : sorted) {
    Elf64_Sym sym{};
    sym.st_name = static_cast<Elf64_Word>(strtab.size());
    strtab.append(s.name);
    strtab.push_back('\0');
    sym.st_info = static_cast<unsigned char>(ELF64_ST_INFO(s.bind, s.type));
    sym.st_shndx = s.section;
    sym.st_value = s.value;
    sym.st_size = s.size;
    if (s.bind != STB_LOCAL && first_global == 0) first_global = syms.size();
    syms.push_back(sym);
  }
  if (first_global == 0) first_global = syms.size();
  const char* sym_name = spec.dynsym ? ".dynsym" : ".symtab";
  const char* str_name = spec.dynsym ? ".dynstr" : ".strtab";
  std::string shstrtab(1, '\0');
  auto add_name = [&](const char* name) {
    Elf64_Word off = static_cast<Elf64_Word>(shstrtab.size());
    shstrtab.append(name);
    shstrtab.push_back('\0');
    return off;
  };
  const Elf64_Word n_text = add_name(".text"), n_data = add_name(".data"),
                   n_note = add_name(".note.gnu.build-id"), n_sym = add_name(sym_name),
                   n_str = add_name(str_name), n_shstr = add_name(".shstrtab");

  // File layout: headers, note at 0x200, .text at kTextOffset, then the rest.
  const uint64_t data_offset = TestElf::kTextOffset + (spec.debug_only ? 0 : spec.text_size);
  const uint64_t data_vaddr = AlignUp(spec.text_vaddr + spec.text_size, 0x1000) + 0x1000;
  const uint64_t sym_offset = AlignUp(data_offset + data.size(), 8);
  const uint64_t str_offset = sym_offset + syms.size() * sizeof(Elf64_Sym);
  const uint64_t shstr_offset = str_offset + strtab.size();
  const uint64_t sh_offset = AlignUp(shstr_offset + shstrtab.size(), 8);

  Elf64_Ehdr* ehdr = elf64_newehdr(h.elf);
  if (ehdr == nullptr) return absl::InternalError(elf_errmsg(-1));
  ehdr->e_ident[EI_DATA] = ELFDATA2LSB;
  ehdr->e_type = ET_DYN;
  ehdr->e_machine = EM_X86_64;
  ehdr->e_version = EV_CURRENT;
  ehdr->e_phoff = sizeof(Elf64_Ehdr);
  ehdr->e_shoff = sh_offset;
  ehdr->e_shstrndx = 6;
  Elf64_Phdr* phdr = elf64_newphdr(h.elf, 1);
  if (phdr == nullptr) return absl::InternalError(elf_errmsg(-1));
  phdr->p_type = PT_LOAD;
  phdr->p_flags = PF_R | PF_X;
  phdr->p_offset = spec.debug_only ? 0 : TestElf::kTextOffset;
  phdr->p_vaddr = phdr->p_paddr = spec.text_vaddr;
  phdr->p_filesz = spec.debug_only ? 0 : spec.text_size;
  phdr->p_memsz = spec.text_size;
  phdr->p_align = 0x1000;

  auto add_section = [&](Elf64_Word name, Elf64_Word type, uint64_t flags, uint64_t addr,
                         uint64_t offset, void* buf, size_t size, Elf_Type dtype, uint64_t align,
                         uint64_t entsize, Elf64_Word link, Elf64_Word info) -> absl::Status {
    Elf_Scn* scn = elf_newscn(h.elf);
    if (scn == nullptr) return absl::InternalError(elf_errmsg(-1));
    if (type != SHT_NOBITS && size > 0) {
      Elf_Data* d = elf_newdata(scn);
      d->d_buf = buf;
      d->d_size = size;
      d->d_type = dtype;
      d->d_align = align;
      d->d_off = 0;
      d->d_version = EV_CURRENT;
    }
    Elf64_Shdr* shdr = elf64_getshdr(scn);
    shdr->sh_name = name;
    shdr->sh_type = type;
    shdr->sh_flags = flags;
    shdr->sh_addr = addr;
    shdr->sh_offset = offset;
    shdr->sh_size = size;
    shdr->sh_addralign = align;
    shdr->sh_entsize = entsize;
    shdr->sh_link = link;
    shdr->sh_info = info;
    return absl::OkStatus();
  };
  absl::Status s;
  // [1] .text  [2] .data  [3] note  [4] symbols  [5] their strings  [6] .shstrtab
  s.Update(add_section(n_text, spec.debug_only ? SHT_NOBITS : SHT_PROGBITS,
                       SHF_ALLOC | SHF_EXECINSTR, spec.text_vaddr,
                       spec.debug_only ? data_offset : TestElf::kTextOffset, text.data(),
                       text.size(), ELF_T_BYTE, 16, 0, 0, 0));
  s.Update(add_section(n_data, SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, data_vaddr, data_offset,
                       data.data(), data.size(), ELF_T_BYTE, 8, 0, 0, 0));
  s.Update(add_section(n_note, note.empty() ? SHT_PROGBITS : SHT_NOTE, SHF_ALLOC, 0x200, 0x200,
                       note.data(), note.size(), ELF_T_BYTE, 4, 0, 0, 0));
  s.Update(add_section(n_sym, spec.dynsym ? SHT_DYNSYM : SHT_SYMTAB, spec.dynsym ? SHF_ALLOC : 0,
                       0, sym_offset, syms.data(), syms.size() * sizeof(Elf64_Sym), ELF_T_SYM, 8,
                       sizeof(Elf64_Sym), 5, first_global));
  s.Update(add_section(n_str, SHT_STRTAB, spec.dynsym ? SHF_ALLOC : 0, 0, str_offset,
                       strtab.data(), strtab.size(), ELF_T_BYTE, 1, 0, 0, 0));
  s.Update(add_section(n_shstr, SHT_STRTAB, 0, 0, shstr_offset, shstrtab.data(), shstrtab.size(),
                       ELF_T_BYTE, 1, 0, 0, 0));
  if (!s.ok()) return s;
  if (elf_update(h.elf, ELF_C_WRITE) < 0) {
    return absl::InternalError(absl::StrCat("elf_update: ", elf_errmsg(-1)));
  }
  return absl::OkStatus();
}

}  // namespace pageblame::symbols::testing

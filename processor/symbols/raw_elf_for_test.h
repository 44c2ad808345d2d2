// For tests that need an ELF file libelf and libdw will open, with sections
// whose bytes the test chooses (a compressed debug section's header, a
// hostile .eh_frame): an ELF64 little-endian x86-64 ET_DYN image laid out by
// hand, its sections in order after the ELF header, then .shstrtab, then the
// section headers. One PT_LOAD maps the whole file at vaddr 0, so file
// offsets are addresses.
//
//   RawElf elf;
//   elf.AddSection(".eh_frame", SHT_PROGBITS, SHF_ALLOC, bytes);
//   std::string image = elf.Build();
#ifndef PAGEBLAME_SYMBOLS_RAW_ELF_FOR_TEST_H_
#define PAGEBLAME_SYMBOLS_RAW_ELF_FOR_TEST_H_

#include <elf.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace pageblame::symbols::testing {

class RawElf {
 public:
  void AddSection(const std::string& name, uint32_t type, uint64_t flags, std::string bytes) {
    sections_.push_back(Section{name, type, flags, std::move(bytes), 0});
  }

  std::string Build() const {
    std::string out(sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr), '\0');
    std::vector<Section> all = sections_;
    std::string shstrtab(1, '\0');
    std::vector<uint32_t> names;
    all.push_back(Section{".shstrtab", SHT_STRTAB, 0, "", 0});
    for (const Section& s : all) {
      names.push_back(static_cast<uint32_t>(shstrtab.size()));
      shstrtab += s.name + '\0';
    }
    all.back().bytes = shstrtab;
    for (Section& s : all) {
      out.resize((out.size() + 7) / 8 * 8, '\0');
      s.offset = out.size();
      out += s.bytes;
    }
    out.resize((out.size() + 7) / 8 * 8, '\0');
    const uint64_t shoff = out.size();
    Elf64_Shdr null_shdr{};
    Append(&out, null_shdr);
    for (size_t i = 0; i < all.size(); ++i) {
      Elf64_Shdr sh{};
      sh.sh_name = names[i];
      sh.sh_type = all[i].type;
      sh.sh_flags = all[i].flags;
      sh.sh_addr = (all[i].flags & SHF_ALLOC) ? all[i].offset : 0;
      sh.sh_offset = all[i].offset;
      sh.sh_size = all[i].bytes.size();
      sh.sh_addralign = (all[i].flags & SHF_COMPRESSED) ? 8 : 1;
      Append(&out, sh);
    }
    Elf64_Ehdr eh{};
    std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_ident[EI_VERSION] = EV_CURRENT;
    eh.e_type = ET_DYN;
    eh.e_machine = EM_X86_64;
    eh.e_version = EV_CURRENT;
    eh.e_phoff = sizeof(Elf64_Ehdr);
    eh.e_shoff = shoff;
    eh.e_ehsize = sizeof(Elf64_Ehdr);
    eh.e_phentsize = sizeof(Elf64_Phdr);
    eh.e_phnum = 1;
    eh.e_shentsize = sizeof(Elf64_Shdr);
    eh.e_shnum = static_cast<uint16_t>(all.size() + 1);
    eh.e_shstrndx = static_cast<uint16_t>(all.size());
    std::memcpy(out.data(), &eh, sizeof(eh));
    Elf64_Phdr ph{};
    ph.p_type = PT_LOAD;
    ph.p_flags = PF_R | PF_X;
    ph.p_filesz = ph.p_memsz = out.size();
    ph.p_align = 0x1000;
    std::memcpy(out.data() + sizeof(eh), &ph, sizeof(ph));
    return out;
  }

 private:
  struct Section {
    std::string name;
    uint32_t type;
    uint64_t flags;
    std::string bytes;
    uint64_t offset;
  };
  template <typename T>
  static void Append(std::string* out, const T& v) {
    out->append(reinterpret_cast<const char*>(&v), sizeof(v));
  }
  std::vector<Section> sections_;
};

}  // namespace pageblame::symbols::testing

#endif  // PAGEBLAME_SYMBOLS_RAW_ELF_FOR_TEST_H_

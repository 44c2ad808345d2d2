// CoreBuilder: small ELF core files made in memory, for the core parser
// tests: both classes and byte orders, PN_XNUM, and any field set wrong on
// purpose. Layout: ELF header, [section header 0 if PN_XNUM], program
// headers, one PT_NOTE's notes, then `data_bytes` of segment data.
//
//   CoreBuilder b;                        // 64-bit little-endian
//   b.AddLoad(0x10000, 0x3000, PF_R | PF_W);
//   b.AddNote("CORE", NtFileNote::kType, b.NtFile({{0x10000, 0x11000, 0}}, {"/lib/x.so"}));
//   std::string core = b.Build();
#ifndef PAGEBLAME_REGIONS_CORE_BUILDER_FOR_TEST_H_
#define PAGEBLAME_REGIONS_CORE_BUILDER_FOR_TEST_H_

#include <elf.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace pageblame::regions {

class CoreBuilder {
 public:
  struct Phdr {
    uint32_t type = PT_LOAD, flags = 0;
    uint64_t offset = 0, vaddr = 0, filesz = 0, memsz = 0;
  };
  struct Note {
    std::string name;
    uint32_t type;
    std::string desc;
  };

  explicit CoreBuilder(bool is64 = true, bool big_endian = false)
      : is64_(is64), big_endian_(big_endian) {}

  uint16_t e_type = ET_CORE;
  int phentsize_delta = 0;   // added to the right e_phentsize
  bool xnum = false;         // e_phnum = PN_XNUM, the count in section 0's sh_info
  uint64_t data_bytes = 0;   // segment data appended after the notes

  // A PT_LOAD with its data right after the notes (offsets assigned in Build).
  void AddLoad(uint64_t vaddr, uint64_t memsz, uint32_t flags, uint64_t filesz = 0) {
    loads_.push_back({PT_LOAD, flags, 0, vaddr, filesz, memsz});
  }
  // Any program header, kept as given (offsets too).
  void AddRaw(const Phdr& p) { raw_.push_back(p); }
  void AddNote(std::string name, uint32_t type, std::string desc) {
    notes_.push_back({std::move(name), type, std::move(desc)});
  }

  // An NT_FILE descriptor in this core's word size and byte order.
  std::string NtFile(const std::vector<std::array<uint64_t, 3>>& entries,
                     const std::vector<std::string>& names, uint64_t page_size = 4096) const {
    std::string d = Word(entries.size()) + Word(page_size);
    for (const auto& e : entries) d += Word(e[0]) + Word(e[1]) + Word(e[2]);
    for (const std::string& n : names) d += n + std::string(1, '\0');
    return d;
  }

  // The word of this class and byte order.
  std::string Word(uint64_t v) const { return Int(v, is64_ ? 8 : 4); }
  std::string Int(uint64_t v, int bytes) const {
    std::string s(bytes, '\0');
    for (int i = 0; i < bytes; ++i) s[big_endian_ ? bytes - 1 - i : i] = static_cast<char>(v >> (8 * i));
    return s;
  }

  std::string Build() const {
    const uint64_t ehsize = is64_ ? 64 : 52, phentsize = is64_ ? 56 : 32, shentsize = is64_ ? 64 : 40;
    const uint64_t phnum = loads_.size() + raw_.size() + 1;
    const uint64_t phoff = ehsize + (xnum ? shentsize : 0);
    std::string notes = Notes();
    const uint64_t notes_at = phoff + phnum * phentsize, data_at = notes_at + notes.size();
    std::string out = Ehdr(phoff, phnum, phentsize + phentsize_delta, xnum ? ehsize : 0, shentsize);
    if (xnum) out += Shdr0(phnum, shentsize);
    out += PhdrBytes({PT_NOTE, PF_R, notes_at, 0, notes.size(), 0});
    uint64_t data = data_at;
    for (Phdr p : loads_) {
      p.offset = data;
      data += p.filesz;
      out += PhdrBytes(p);
    }
    for (const Phdr& p : raw_) out += PhdrBytes(p);
    return out + notes + std::string(data_bytes, '\xAA');
  }

 private:
  std::string Ehdr(uint64_t phoff, uint64_t phnum, uint64_t phentsize, uint64_t shoff,
                   uint64_t shentsize) const {
    std::string e = "\x7f" "ELF";
    e += static_cast<char>(is64_ ? ELFCLASS64 : ELFCLASS32);
    e += static_cast<char>(big_endian_ ? ELFDATA2MSB : ELFDATA2LSB);
    e += static_cast<char>(EV_CURRENT);
    e += std::string(9, '\0');
    e += Int(e_type, 2) + Int(is64_ ? EM_X86_64 : EM_386, 2) + Int(EV_CURRENT, 4);
    e += Word(0) + Word(phoff) + Word(shoff);  // entry, phoff, shoff
    e += Int(0, 4) + Int(is64_ ? 64 : 52, 2) + Int(phentsize, 2);
    e += Int(xnum ? PN_XNUM : phnum, 2) + Int(shentsize, 2) + Int(xnum ? 1 : 0, 2) + Int(0, 2);
    return e;
  }
  std::string Shdr0(uint64_t phnum, uint64_t shentsize) const {
    // sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, sh_link, sh_info, ...
    std::string s = Int(0, 4) + Int(0, 4) + Word(0) + Word(0) + Word(0) + Word(0) + Int(0, 4) +
                    Int(phnum, 4);
    return s + std::string(shentsize - s.size(), '\0');
  }
  std::string PhdrBytes(const Phdr& p) const {
    if (is64_)
      return Int(p.type, 4) + Int(p.flags, 4) + Word(p.offset) + Word(p.vaddr) + Word(0) +
             Word(p.filesz) + Word(p.memsz) + Word(1);
    return Int(p.type, 4) + Word(p.offset) + Word(p.vaddr) + Word(0) + Word(p.filesz) +
           Word(p.memsz) + Int(p.flags, 4) + Word(1);
  }
  std::string Notes() const {
    std::string out;
    for (const Note& n : notes_) {
      std::string name = n.name + std::string(1, '\0');
      out += Int(name.size(), 4) + Int(n.desc.size(), 4) + Int(n.type, 4);
      out += name + std::string(-name.size() % 4, '\0');
      out += n.desc + std::string(-n.desc.size() % 4, '\0');
    }
    return out;
  }

  bool is64_, big_endian_;
  std::vector<Phdr> loads_, raw_;
  std::vector<Note> notes_;
};

}  // namespace pageblame::regions

#endif  // PAGEBLAME_REGIONS_CORE_BUILDER_FOR_TEST_H_

#include "processor/unwind/elf_module.h"

#include <elf.h>
#include <gelf.h>

#include <cstring>

namespace pageblame::unwind {
namespace {

bool HasSection(Elf* elf, const char* name) {
  size_t strndx = 0;
  if (elf_getshdrstrndx(elf, &strndx) != 0) return false;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type == SHT_NOBITS) continue;
    const char* n = elf_strptr(elf, strndx, shdr.sh_name);
    if (n != nullptr && std::strcmp(n, name) == 0) return true;
  }
  return false;
}

std::optional<symbols::ElfHandle> OpenElf(const std::string& path) {
  if (path.empty()) return std::nullopt;
  absl::StatusOr<symbols::ElfHandle> h = symbols::ElfHandle::Open(path);
  if (!h.ok()) return std::nullopt;
  return std::move(*h);
}

}  // namespace

std::unique_ptr<ElfModule> ElfModule::Open(const symbols::DsoLocation& loc) {
  std::unique_ptr<ElfModule> m(new ElfModule());
  m->binary_ = OpenElf(loc.elf_path);
  m->debug_ = OpenElf(loc.debug_path);
  if (!m->binary_ && !m->debug_) return nullptr;
  Elf* main = m->binary_ ? m->binary_->elf() : m->debug_->elf();
  if (m->binary_) m->eh_cfi_ = dwarf_getcfi_elf(m->binary_->elf());
  // .debug_frame: the debug file's, else the binary's own (built -g, not
  // stripped). dwarf_begin_elf reads only the section headers here.
  for (const std::optional<symbols::ElfHandle>* h : {&m->debug_, &m->binary_}) {
    if (!*h || !HasSection((*h)->elf(), ".debug_frame")) continue;
    m->dwarf_ = dwarf_begin_elf((*h)->elf(), DWARF_C_READ, nullptr);
    if (m->dwarf_ != nullptr) m->debug_cfi_ = dwarf_getcfi(m->dwarf_);
    if (m->debug_cfi_ != nullptr) break;
    if (m->dwarf_ != nullptr) dwarf_end(m->dwarf_);
    m->dwarf_ = nullptr;
  }
  size_t phnum = 0;
  if (elf_getphdrnum(main, &phnum) == 0) {
    for (size_t i = 0; i < phnum; ++i) {
      GElf_Phdr ph;
      if (gelf_getphdr(main, static_cast<int>(i), &ph) == nullptr || ph.p_type != PT_LOAD) continue;
      m->segments_.push_back(Segment{ph.p_offset, ph.p_vaddr, ph.p_filesz});
    }
  }
  return m;
}

ElfModule::~ElfModule() {
  if (eh_cfi_ != nullptr) dwarf_cfi_end(eh_cfi_);
  if (dwarf_ != nullptr) dwarf_end(dwarf_);
}

Dwarf_Frame* ElfModule::FrameAt(uint64_t vaddr) const {
  for (Dwarf_CFI* cfi : {eh_cfi_, debug_cfi_}) {
    Dwarf_Frame* frame = nullptr;
    if (cfi != nullptr && dwarf_cfi_addrframe(cfi, vaddr, &frame) == 0 && frame != nullptr) {
      return frame;
    }
  }
  return nullptr;
}

std::optional<uint64_t> ElfModule::OffsetToVaddr(uint64_t offset) const {
  for (const Segment& s : segments_) {
    if (offset >= s.offset && offset - s.offset < s.filesz) return offset - s.offset + s.vaddr;
  }
  return std::nullopt;
}

}  // namespace pageblame::unwind

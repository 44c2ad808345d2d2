#include "processor/unwind/elf_module.h"

#include <elf.h>
#include <gelf.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "processor/symbols/debug_section_limit.h"
#include "processor/unwind/cfi_register_check.h"

namespace pageblame::unwind {
namespace {

Elf_Scn* FindSection(Elf* elf, const char* name) {
  size_t strndx = 0;
  if (elf_getshdrstrndx(elf, &strndx) != 0) return nullptr;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type == SHT_NOBITS) continue;
    const char* n = elf_strptr(elf, strndx, shdr.sh_name);
    if (n != nullptr && std::strcmp(n, name) == 0) return scn;
  }
  return nullptr;
}

std::optional<symbols::ElfHandle> OpenElf(const std::string& path) {
  if (path.empty()) return std::nullopt;
  absl::StatusOr<symbols::ElfHandle> h = symbols::ElfHandle::Open(path);
  if (!h.ok()) return std::nullopt;
  return std::move(*h);
}

// The section's CFI as CfiRegisterCheck sees it (libdw reads the same bytes:
// .eh_frame as it is, .debug_frame once dwarf_begin_elf has inflated it).
absl::Status CheckCfi(Elf* elf, Elf_Scn* scn, bool eh_frame) {
  return CfiRegisterCheck::Check(reinterpret_cast<const unsigned char*>(elf_getident(elf, nullptr)),
                                 elf_getdata(scn, nullptr), eh_frame);
}

}  // namespace

std::unique_ptr<ElfModule> ElfModule::Open(const symbols::DsoLocation& loc) {
  std::unique_ptr<ElfModule> m(new ElfModule());
  m->binary_ = OpenElf(loc.elf_path);
  m->debug_ = OpenElf(loc.debug_path);
  if (!m->binary_ && !m->debug_) return nullptr;
  Elf* main = m->binary_ ? m->binary_->elf() : m->debug_->elf();
  if (m->binary_) m->OpenEhFrame(*m->binary_, loc.elf_path);
  // .debug_frame: the debug file's, else the binary's own (built -g, not
  // stripped).
  for (const std::string* path : {&loc.debug_path, &loc.elf_path}) {
    const std::optional<symbols::ElfHandle>& h = path == &loc.debug_path ? m->debug_ : m->binary_;
    if (h && m->OpenDebugFrame(*h, *path)) break;
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

void ElfModule::OpenEhFrame(const symbols::ElfHandle& h, const std::string& path) {
  // A file without section headers (sstrip) still has its .eh_frame found
  // by libdw through PT_GNU_EH_FRAME; it is not checked then.
  if (Elf_Scn* scn = FindSection(h.elf(), ".eh_frame")) {
    if (absl::Status s = CheckCfi(h.elf(), scn, /*eh_frame=*/true); !s.ok()) {
      Refuse(path, ".eh_frame", s);
      return;
    }
  }
  eh_cfi_ = dwarf_getcfi_elf(h.elf());
}

bool ElfModule::OpenDebugFrame(const symbols::ElfHandle& h, const std::string& path) {
  if (FindSection(h.elf(), ".debug_frame") == nullptr) return false;
  // dwarf_begin_elf inflates every compressed debug section, .debug_frame
  // or not: their claimed sizes are checked first.
  if (absl::Status s = symbols::DebugSectionLimit::Check(h.elf(), h.file_size()); !s.ok()) {
    Refuse(path, "debug sections", s);
    return false;
  }
  dwarf_ = dwarf_begin_elf(h.elf(), DWARF_C_READ, nullptr);
  if (dwarf_ != nullptr) {
    // The inflated .debug_frame libdw will read.
    Elf_Scn* scn = FindSection(h.elf(), ".debug_frame");
    absl::Status s = scn ? CheckCfi(h.elf(), scn, /*eh_frame=*/false) : absl::OkStatus();
    if (s.ok()) {
      debug_cfi_ = dwarf_getcfi(dwarf_);
    } else {
      Refuse(path, ".debug_frame", s);
    }
  }
  if (debug_cfi_ != nullptr) return true;
  if (dwarf_ != nullptr) dwarf_end(dwarf_);
  dwarf_ = nullptr;
  return false;
}

void ElfModule::Refuse(const std::string& path, const char* what, const absl::Status& why) {
  if (refused_.empty()) refused_ = absl::StrCat(path, ": ", what, ": ", why.message());
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

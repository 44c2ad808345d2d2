// One ELF file's unwind tables: its .eh_frame and the .debug_frame of its
// separate debug file (or of itself), through libdw's CFI readers, and its
// PT_LOAD segments to turn a mapping's file offsets into the addresses the
// CFI speaks of.
//
//   std::unique_ptr<ElfModule> m = ElfModule::Open(locator.Locate(path, build_id));
//   std::optional<uint64_t> vaddr = m->OffsetToVaddr(pc - map.start + map.pgoff);
//   Dwarf_Frame* f = m->FrameAt(*vaddr);   // caller free()s it; null: no CFI here
//
// .eh_frame comes first, then .debug_frame, as libdwfl's unwinder takes them
// (__libdwfl_frame_unwind). Files are opened once per module and read
// lazily by libelf (ELF_C_READ: only the sections libdw asks for).
#ifndef PAGEBLAME_UNWIND_ELF_MODULE_H_
#define PAGEBLAME_UNWIND_ELF_MODULE_H_

#include <elfutils/libdw.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "processor/symbols/dso_locator.h"
#include "processor/symbols/elf_handle.h"

namespace pageblame::unwind {

class ElfModule {
 public:
  // Null if neither the binary nor the debug file can be read as ELF.
  static std::unique_ptr<ElfModule> Open(const symbols::DsoLocation& loc);
  ~ElfModule();
  ElfModule(const ElfModule&) = delete;
  ElfModule& operator=(const ElfModule&) = delete;

  // The frame state libdw computes for `vaddr`, or null if no FDE covers it.
  // The caller owns the result (free()).
  Dwarf_Frame* FrameAt(uint64_t vaddr) const;
  // The virtual address file offset `offset` is loaded at; nullopt if no
  // PT_LOAD segment holds it.
  std::optional<uint64_t> OffsetToVaddr(uint64_t offset) const;
  bool has_cfi() const { return eh_cfi_ != nullptr || debug_cfi_ != nullptr; }
  // Why some of the file's CFI was not used ("path: section: why"; "" if
  // all was): CFI naming registers past the architecture's
  // (cfi_register_check.h), or compressed debug sections claiming more than
  // symbols::DebugSectionLimit allows.
  const std::string& cfi_refused() const { return refused_; }

 private:
  ElfModule() = default;
  void OpenEhFrame(const symbols::ElfHandle& h, const std::string& path);
  // True if the file's .debug_frame is in use.
  bool OpenDebugFrame(const symbols::ElfHandle& h, const std::string& path);
  void Refuse(const std::string& path, const char* what, const absl::Status& why);
  struct Segment {
    uint64_t offset, vaddr, filesz;
  };

  std::optional<symbols::ElfHandle> binary_;
  std::optional<symbols::ElfHandle> debug_;
  Dwarf_CFI* eh_cfi_ = nullptr;     // dwarf_getcfi_elf: ended by us
  Dwarf* dwarf_ = nullptr;          // the file holding .debug_frame
  Dwarf_CFI* debug_cfi_ = nullptr;  // dwarf_getcfi: owned by dwarf_
  std::vector<Segment> segments_;
  std::string refused_;
};

}  // namespace pageblame::unwind

#endif  // PAGEBLAME_UNWIND_ELF_MODULE_H_

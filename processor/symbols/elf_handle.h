// An open ELF file (libelf from elfutils): owns the descriptor and the Elf*.
// libelf does the bounds-checked parsing of the file; callers only walk its
// headers, sections and notes.
//
//   ASSIGN_OR_RETURN(ElfHandle elf, ElfHandle::Open("/usr/lib/x86_64-linux-gnu/libc.so.6"));
//   std::string id = elf.BuildId();  // raw NT_GNU_BUILD_ID bytes, "" if none
#ifndef PAGEBLAME_SYMBOLS_ELF_HANDLE_H_
#define PAGEBLAME_SYMBOLS_ELF_HANDLE_H_

#include <libelf.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace pageblame::symbols {

class ElfHandle {
 public:
  // NotFound if the file cannot be opened, InvalidArgument if it is not ELF.
  static absl::StatusOr<ElfHandle> Open(const std::string& path);

  ElfHandle(ElfHandle&& other) noexcept;
  ElfHandle& operator=(ElfHandle&& other) noexcept;
  ElfHandle(const ElfHandle&) = delete;
  ElfHandle& operator=(const ElfHandle&) = delete;
  ~ElfHandle();

  Elf* elf() const { return elf_; }
  // The file's size when it was opened (limits relative to the input's size).
  uint64_t file_size() const { return file_size_; }

  // The NT_GNU_BUILD_ID note's descriptor (raw bytes), looked for in SHT_NOTE
  // sections and then in PT_NOTE segments; "" if the file has none.
  std::string BuildId() const;

 private:
  ElfHandle(int fd, Elf* elf, uint64_t file_size) : fd_(fd), elf_(elf), file_size_(file_size) {}
  void Reset();

  int fd_ = -1;
  Elf* elf_ = nullptr;
  uint64_t file_size_ = 0;
};

}  // namespace pageblame::symbols

#endif  // PAGEBLAME_SYMBOLS_ELF_HANDLE_H_

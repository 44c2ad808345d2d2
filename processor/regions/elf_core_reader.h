// ElfCoreReader: the program headers and notes of an ELF core file (as the
// kernel, gdb's gcore, and .NET's createdump / dotnet-dump write them), read
// through libelf. Only the ELF header, the program headers and the PT_NOTE
// contents are read: a core can be many GBs, and the memory contents of the
// PT_LOAD segments are never needed to know the address ranges.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<ElfCoreReader> core, ElfCoreReader::OpenFile(fd, size, "x.core"));
//   for (const LoadSegment& s : core->loads()) { /* [s.vaddr, s.vaddr + s.memsz) */ }
//   for (const FileMapping& f : core->files()) { /* NT_FILE: f.path at [f.start, f.end) */ }
//
// Every offset and size is checked against the file's size before libelf is
// asked to read it (libelf does not check everything itself: for a header
// table cut short it reports fewer program headers instead of an error).
// Errors are InvalidArgument, start with the file's name, and say what is
// wrong: "x.core: truncated core: the program headers (24 x 56 bytes at
// offset 64) end at byte 1408, past the end of the file (1000 bytes)".
// Segment data that is not in the file (a core cut short after its notes, or
// trimmed on purpose) is fine: LoadSegment::data_in_file says so.
// Both ELF classes and byte orders are read; PN_XNUM (more than 65534
// program headers, as createdump writes for big processes) too.
#ifndef PAGEBLAME_REGIONS_ELF_CORE_READER_H_
#define PAGEBLAME_REGIONS_ELF_CORE_READER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "processor/regions/nt_file_note.h"

typedef struct Elf Elf;  // libelf's handle, as <libelf.h> declares it

namespace pageblame::regions {

struct LoadSegment {
  int index = 0;       // the program header's number, 1-based, in file order
  uint64_t vaddr = 0;  // [vaddr, vaddr + memsz): checked not to pass 2^64
  uint64_t memsz = 0;
  uint32_t flags = 0;  // PF_R | PF_W | PF_X bits of p_flags
  uint64_t offset = 0, filesz = 0;
  bool data_in_file = false;  // [offset, offset + filesz) lies inside the file
};

class ElfCoreReader {
 public:
  // Maximum PT_NOTE size read (the notes are per-thread registers and the
  // file list: tens of MB for the largest processes).
  static constexpr uint64_t kMaxNoteBytes = uint64_t{256} << 20;

  // `fd` is a regular file of `size` bytes; it must stay open while the
  // reader lives. `name` starts every error message.
  static absl::StatusOr<std::unique_ptr<ElfCoreReader>> OpenFile(int fd, uint64_t size,
                                                                 std::string name);
  // The same over a copy of the file in memory.
  static absl::StatusOr<std::unique_ptr<ElfCoreReader>> OpenMemory(std::string bytes,
                                                                   std::string name);
  ~ElfCoreReader();
  ElfCoreReader(const ElfCoreReader&) = delete;
  ElfCoreReader& operator=(const ElfCoreReader&) = delete;

  bool is64() const { return is64_; }  // ELFCLASS64
  int program_headers() const { return program_headers_; }
  const std::vector<LoadSegment>& loads() const { return loads_; }  // in file order
  const std::vector<FileMapping>& files() const { return files_; }  // NT_FILE entries
  // The process id from NT_PRPSINFO (pr_pid), 0 without one; the number of
  // NT_PRSTATUS notes (one per thread). Read for 64-bit little-endian cores
  // (x86-64's elf_prpsinfo: pr_pid at byte 24), where the heap walker uses
  // them; other cores leave them 0.
  uint32_t pid() const { return pid_; }
  uint32_t threads() const { return threads_; }

  // Up to `n` bytes of the file at `offset` (fewer at its end): segment data.
  absl::StatusOr<std::string> ReadBytes(uint64_t offset, size_t n) const;

 private:
  ElfCoreReader(std::string name, uint64_t size) : name_(std::move(name)), size_(size) {}

  absl::Status Begin(int fd, absl::string_view head);
  absl::StatusOr<uint64_t> ProgramHeaderCount();
  absl::Status ReadProgramHeaders();
  absl::Status ReadNotes(uint64_t offset, uint64_t size);
  absl::Status Error(absl::string_view what) const;
  // "what (N bytes at offset O) ..." unless [offset, offset + n) is in the file.
  absl::Status CheckInFile(absl::string_view what, uint64_t offset, uint64_t n) const;

  std::string name_;
  uint64_t size_;
  std::string memory_;  // the file's bytes, for OpenMemory
  Elf* elf_ = nullptr;
  bool is64_ = true, big_endian_ = false;
  int program_headers_ = 0;
  std::vector<LoadSegment> loads_;
  std::vector<FileMapping> files_;
  uint32_t pid_ = 0, threads_ = 0;
};

}  // namespace pageblame::regions

#endif  // PAGEBLAME_REGIONS_ELF_CORE_READER_H_

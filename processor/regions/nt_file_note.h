// NtFileNote: the NT_FILE note of an ELF core file ("CORE", type 0x46494c45):
// which address ranges were mapped from which file.
//
//   ASSIGN_OR_RETURN(std::vector<FileMapping> files,
//                    NtFileNote::Parse(desc, /*word_size=*/8, /*big_endian=*/false));
//
// Layout of the note's descriptor, in words of the core's class (8 bytes for
// ELFCLASS64, 4 for ELFCLASS32) and byte order, as the kernel writes it
// (fs/binfmt_elf.c fill_files_note) and gdb and createdump copy it:
//   count, page_size,
//   count x {start, end, file_ofs}      [start, end) half-open
//   count NUL-terminated file names, in the same order
// file_ofs is in units of page_size: the kernel writes pages and its page
// size, gdb writes bytes and a page size of 1. Bytes after the last name are
// padding (createdump pads the note to 4 bytes, sometimes with 4 zeros).
//
// Everything is checked against the descriptor's size before it is read: a
// count whose entries do not fit, fewer names than entries, a range with end
// <= start, or offset * page_size past 2^64 is an InvalidArgument error
// saying what is wrong (the caller adds the file name).
#ifndef PAGEBLAME_REGIONS_NT_FILE_NOTE_H_
#define PAGEBLAME_REGIONS_NT_FILE_NOTE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace pageblame::regions {

struct FileMapping {
  uint64_t start = 0;
  uint64_t end = 0;     // exclusive
  uint64_t offset = 0;  // in bytes
  std::string path;
  int entry = 0;        // 1-based position in the note
};

class NtFileNote {
 public:
  static constexpr uint32_t kType = 0x46494c45;  // "FILE"

  // `word_size` is 4 or 8.
  static absl::StatusOr<std::vector<FileMapping>> Parse(absl::string_view desc, int word_size,
                                                        bool big_endian);
};

}  // namespace pageblame::regions

#endif  // PAGEBLAME_REGIONS_NT_FILE_NOTE_H_

// TableFile: an open region-table file, as RegionTableReader needs it: the
// first bytes to tell an ELF core from text, positioned reads for a core
// (which can be GBs and is never read whole), and the whole text otherwise.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<TableFile> f, TableFile::Open("address.txt"));
//   if (f->is_regular()) ASSIGN_OR_RETURN(std::string head, f->ReadAt(0, 64));
//   ASSIGN_OR_RETURN(std::string text, f->ReadAll());
//
// Pipes and other non-regular files (`<(ssh host cat /proc/PID/maps)`) can be
// read whole; only a directory is refused at Open. Errors name the path:
// "PATH: is a directory, not a region table", "cannot open PATH: ...",
// "cannot read PATH: ...". The descriptor is closed when the object goes.
#ifndef PAGEBLAME_REGIONS_TABLE_FILE_H_
#define PAGEBLAME_REGIONS_TABLE_FILE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace pageblame::regions {

class TableFile {
 public:
  static absl::StatusOr<std::unique_ptr<TableFile>> Open(const std::string& path);
  ~TableFile();
  TableFile(const TableFile&) = delete;
  TableFile& operator=(const TableFile&) = delete;

  const std::string& path() const { return path_; }
  int fd() const { return fd_; }
  // A regular file: size() is its size and ReadAt works.
  bool is_regular() const { return regular_; }
  uint64_t size() const { return size_; }

  // Up to `n` bytes at `offset` (fewer at the end of the file).
  absl::StatusOr<std::string> ReadAt(uint64_t offset, size_t n) const;
  // Everything from the current position to the end (the whole file for a
  // fresh TableFile; ReadAt does not move the position).
  absl::StatusOr<std::string> ReadAll() const;

 private:
  TableFile(std::string path, int fd, bool regular, uint64_t size)
      : path_(std::move(path)), fd_(fd), regular_(regular), size_(size) {}

  std::string path_;
  int fd_;
  bool regular_;
  uint64_t size_;
};

}  // namespace pageblame::regions

#endif  // PAGEBLAME_REGIONS_TABLE_FILE_H_

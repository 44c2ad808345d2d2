// A read-only memory map of a whole file (RAII: unmapped and closed on
// destruction). perf.data headers, attrs and feature sections are read in
// place through the map; the data section, read once front to back, goes
// through a FileWindow (ReadAt) instead.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<MappedFile> f, MappedFile::Open(path));
//   ByteReader r(f->bytes());
//
// An empty file maps to an empty span. The map stays valid (and so do all
// spans into it) for the lifetime of the MappedFile.
#ifndef PAGEBLAME_BASE_MAPPED_FILE_H_
#define PAGEBLAME_BASE_MAPPED_FILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace pageblame {

class MappedFile {
 public:
  // Maps `path` read-only. Errors (one line, naming the path): missing or
  // unreadable file, a directory or other non-regular file, mmap failure.
  static absl::StatusOr<std::unique_ptr<MappedFile>> Open(const std::string& path);

  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  absl::Span<const uint8_t> bytes() const { return {data_, size_}; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // Copies up to into.size() bytes at `offset` into `into` (pread; retried
  // until full or the end of the file). Returns how many were read; errors
  // name the file. For bulk front-to-back reading (FileWindow), where copying
  // into a cached buffer is cheaper than mapping pages in and out.
  absl::StatusOr<size_t> ReadAt(uint64_t offset, absl::Span<uint8_t> into) const;
  // Tells the kernel that [offset, offset+length) will be read front to back
  // (posix_fadvise POSIX_FADV_SEQUENTIAL: a bigger readahead). A hint only.
  void AdviseSequentialRead(uint64_t offset, uint64_t length) const;

 private:
  MappedFile(std::string path, int fd, const uint8_t* data, size_t size)
      : path_(std::move(path)), fd_(fd), data_(data), size_(size) {}

  std::string path_;
  int fd_;  // kept open for ReadAt
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_MAPPED_FILE_H_

// A read-only memory map of a whole file (RAII: unmapped and closed on
// destruction). Used for zero-copy reading of perf.data files, which can be
// hundreds of MB: records are handed out as spans into the map.
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

  // Tells the kernel that [offset, offset+length) will be read front to back
  // (madvise MADV_SEQUENTIAL: bigger readahead, pages dropped sooner).
  // A hint only; out-of-range parts are clipped.
  void AdviseSequential(size_t offset, size_t length) const;
  // Drops [offset, offset+length) from this process's resident set
  // (MADV_DONTNEED). The pages stay in the page cache, and reading them again
  // faults them back in unchanged (the mapping is read-only). Lets a reader
  // that goes through the file once keep its RSS flat instead of growing to
  // the file's size.
  void Release(size_t offset, size_t length) const;
  // Maps [offset, offset+length) into this process ahead of use (by reading
  // it), so that reading it later takes no page faults.
  void Populate(size_t offset, size_t length) const;

 private:
  MappedFile(std::string path, const uint8_t* data, size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}

  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_MAPPED_FILE_H_

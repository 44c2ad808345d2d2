#include "processor/base/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace pageblame {

namespace {

absl::Status ErrnoError(const std::string& path, const char* what, int err) {
  std::string msg = absl::StrCat(path, ": ", what, ": ", std::strerror(err));
  if (err == ENOENT) return absl::NotFoundError(msg);
  if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(msg);
  return absl::UnavailableError(msg);
}

}  // namespace

absl::StatusOr<std::unique_ptr<MappedFile>> MappedFile::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(path, "cannot open", errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return ErrnoError(path, "cannot stat", err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a regular file (cannot be memory-mapped)"));
  }
  size_t size = static_cast<size_t>(st.st_size);
  const uint8_t* data = nullptr;
  if (size > 0) {
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return ErrnoError(path, "cannot mmap", err);
    }
    data = static_cast<const uint8_t*>(p);
  }
  // The mapping keeps the file referenced; the descriptor is not needed.
  ::close(fd);
  return std::unique_ptr<MappedFile>(new MappedFile(path, data, size));
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

void MappedFile::AdviseSequential(size_t offset, size_t length) const {
  if (data_ == nullptr || offset >= size_) return;
  if (length > size_ - offset) length = size_ - offset;
  // madvise wants a page-aligned start.
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  size_t start = offset / page * page;
  ::madvise(const_cast<uint8_t*>(data_) + start, length + (offset - start), MADV_SEQUENTIAL);
}

void MappedFile::Release(size_t offset, size_t length) const {
  if (data_ == nullptr || offset >= size_) return;
  if (length > size_ - offset) length = size_ - offset;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  size_t start = (offset + page - 1) / page * page;  // whole pages inside the range only
  size_t end = (offset + length) / page * page;
  if (start < end) ::madvise(const_cast<uint8_t*>(data_) + start, end - start, MADV_DONTNEED);
}

void MappedFile::Populate(size_t offset, size_t length) const {
  if (data_ == nullptr || offset >= size_) return;
  if (length > size_ - offset) length = size_ - offset;
  // One read per page. The first read of a page-cache page faults and the
  // kernel maps its neighbours with it (fault-around, 16 pages by default);
  // the rest are plain reads. (MADV_POPULATE_READ maps one page at a time
  // through get_user_pages and measured twice as slow.)
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  uint8_t sum = 0;
  for (size_t at = offset / page * page; at < offset + length; at += page) {
    sum += *static_cast<const volatile uint8_t*>(data_ + at);
  }
  (void)sum;
}

}  // namespace pageblame

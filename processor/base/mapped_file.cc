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
    return absl::FailedPreconditionError(
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
  return std::unique_ptr<MappedFile>(new MappedFile(path, fd, data, size));
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
  ::close(fd_);
}

absl::StatusOr<size_t> MappedFile::ReadAt(uint64_t offset, absl::Span<uint8_t> into) const {
  size_t done = 0;
  while (done < into.size()) {
    ssize_t n = ::pread(fd_, into.data() + done, into.size() - done,
                        static_cast<off_t>(offset + done));
    if (n < 0) {
      const int err = errno;
      if (err == EINTR) continue;
      return ErrnoError(path_, absl::StrCat("cannot read at offset ", offset + done).c_str(),
                        err);
    }
    if (n == 0) break;  // end of file
    done += static_cast<size_t>(n);
  }
  return done;
}

void MappedFile::AdviseSequentialRead(uint64_t offset, uint64_t length) const {
  ::posix_fadvise(fd_, static_cast<off_t>(offset), static_cast<off_t>(length),
                  POSIX_FADV_SEQUENTIAL);
}

}  // namespace pageblame

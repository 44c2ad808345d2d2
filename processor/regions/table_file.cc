#include "processor/regions/table_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace pageblame::regions {
namespace {

absl::Status ReadError(const std::string& path) {
  return absl::DataLossError(absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<TableFile>> TableFile::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    std::string why = std::strerror(errno);
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", why));
    return absl::PermissionDeniedError(absl::StrCat("cannot open ", path, ": ", why));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    absl::Status s = ReadError(path);
    ::close(fd);
    return s;
  }
  // Reading a directory fails with EISDIR only at read(); said first, since
  // a directory given for a file is a usage slip worth naming as such.
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory, not a region table"));
  }
  bool regular = S_ISREG(st.st_mode);
  return std::unique_ptr<TableFile>(
      new TableFile(path, fd, regular, regular ? static_cast<uint64_t>(st.st_size) : 0));
}

TableFile::~TableFile() { ::close(fd_); }

absl::StatusOr<std::string> TableFile::ReadAt(uint64_t offset, size_t n) const {
  std::string out(n, '\0');
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd_, out.data() + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return ReadError(path_);
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  out.resize(got);
  return out;
}

absl::StatusOr<std::string> TableFile::ReadAll() const {
  std::string out;
  if (regular_) out.reserve(size_);
  char buf[1 << 16];
  for (;;) {
    ssize_t r = ::read(fd_, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return ReadError(path_);
    if (r == 0) return out;
    out.append(buf, static_cast<size_t>(r));
  }
}

}  // namespace pageblame::regions

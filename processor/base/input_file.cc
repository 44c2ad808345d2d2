#include "processor/base/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace pageblame {
namespace {

absl::Status ReadError(const std::string& path) {
  return absl::DataLossError(absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
}

absl::string_view KindName(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Refuses what `accept` does not take; OK otherwise.
absl::Status CheckKind(const std::string& path, absl::string_view what, mode_t mode,
                       InputFile::Accept accept) {
  // Reading a directory fails with EISDIR only at read(); said first, since
  // a directory given for a file is a slip worth naming as such.
  if (S_ISDIR(mode)) return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory, not a ", what));
  if (S_ISREG(mode) || accept == InputFile::Accept::kRegularOrStream) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat(path, ": is ", KindName(mode), ", not a regular file (a ", what, " is one)"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<InputFile>> InputFile::Open(const std::string& path, absl::string_view what,
                                                           Accept accept) {
  // O_NONBLOCK: opening a FIFO for reading would wait for a writer forever.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    std::string why = std::strerror(errno);
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", why));
    return absl::PermissionDeniedError(absl::StrCat("cannot open ", path, ": ", why));
  }
  struct stat st;
  absl::Status kind = ::fstat(fd, &st) == 0 ? CheckKind(path, what, st.st_mode, accept) : ReadError(path);
  // Reads block again: a pipe's writer may be slow, and a FIFO with no
  // writer reads as empty at once.
  if (kind.ok() && ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) kind = ReadError(path);
  if (!kind.ok()) {
    ::close(fd);
    return kind;
  }
  const bool regular = S_ISREG(st.st_mode);
  return std::unique_ptr<InputFile>(
      new InputFile(path, std::string(what), fd, regular, regular ? static_cast<uint64_t>(st.st_size) : 0));
}

absl::StatusOr<std::string> InputFile::ReadWhole(const std::string& path, absl::string_view what,
                                                 Accept accept) {
  absl::StatusOr<std::unique_ptr<InputFile>> f = Open(path, what, accept);
  if (!f.ok()) return f.status();
  return (*f)->ReadAll();
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

int InputFile::Release() { return std::exchange(fd_, -1); }

absl::Status InputFile::TooLarge() const {
  if (regular_) {
    return absl::ResourceExhaustedError(absl::StrCat(path_, ": more than ", Limit() >> 20,
                                                     " MiB, the most pageblame reads of a text input (this ",
                                                     what_, ")"));
  }
  return absl::ResourceExhaustedError(absl::StrCat(path_, ": more than ", Limit() >> 20,
                                                   " MiB from a pipe or device, the most pageblame reads of one "
                                                   "(an endless stream such as /dev/zero?)"));
}

absl::StatusOr<std::string> InputFile::ReadAt(uint64_t offset, size_t n) const {
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

absl::StatusOr<std::string> InputFile::ReadAll() const {
  if (regular_ && size_ > Limit()) return TooLarge();
  std::string out;
  if (regular_) out.reserve(size_);
  char buf[1 << 16];
  for (;;) {
    ssize_t r = ::read(fd_, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return ReadError(path_);
    if (r == 0) return out;
    if (out.size() + static_cast<size_t>(r) > Limit()) return TooLarge();
    out.append(buf, static_cast<size_t>(r));
  }
}

}  // namespace pageblame

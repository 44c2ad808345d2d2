#include "processor/base/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "processor/base/write_all.h"

namespace pageblame {
namespace {

absl::Status Failure(const std::string& path, int err) {
  const std::string why = absl::StrCat("cannot write ", path, ": ", std::strerror(err));
  return err == EACCES || err == EPERM || err == EROFS ? absl::PermissionDeniedError(why)
                                                        : absl::UnavailableError(why);
}

// All of `bytes` at `at` (pwrite) or at the end (write when `at` < 0); an errno or 0.
}  // namespace

absl::StatusOr<std::unique_ptr<AtomicFile>> AtomicFile::Create(const std::string& path, mode_t mode) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string temp = absl::StrCat(dir, "/.", base, ".XXXXXX");
  const int fd = ::mkstemp(temp.data());  // O_EXCL, 0600
  if (fd < 0) return Failure(path, errno);
  std::unique_ptr<AtomicFile> f(new AtomicFile(path, std::move(temp), fd));
  if (::fchmod(fd, mode) != 0) f->Failed(errno);
  if (!f->status_.ok()) return f->status_;  // dropped: the temporary file goes
  return f;
}

AtomicFile::~AtomicFile() {
  if (fd_ < 0) return;
  ::close(fd_);
  ::unlink(temp_.c_str());
}

void AtomicFile::Failed(int err) {
  if (status_.ok()) status_ = Failure(path_, err);
}

void AtomicFile::Take(std::string_view bytes) {
  if (!status_.ok()) return;
  if (const int err = WriteAll(fd_, bytes, -1); err != 0) Failed(err);
}

void AtomicFile::Overwrite(uint64_t at, std::string_view bytes) {
  if (!status_.ok()) return;
  if (at > written() || bytes.size() > written() - at) {
    Failed(EINVAL);
  } else if (const int err = WriteAll(fd_, bytes, static_cast<off_t>(at)); err != 0) {
    Failed(err);
  }
}

absl::Status AtomicFile::Commit() {
  if (fd_ < 0) return status_;  // committed before
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) Failed(errno);
  if (status_.ok() && std::rename(temp_.c_str(), path_.c_str()) != 0) Failed(errno);
  if (!status_.ok()) ::unlink(temp_.c_str());
  return status_;
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes, mode_t mode) {
  absl::StatusOr<std::unique_ptr<AtomicFile>> f = AtomicFile::Create(path, mode);
  if (!f.ok()) return f.status();
  (*f)->Append(bytes);
  return (*f)->Commit();
}

}  // namespace pageblame

#include "processor/base/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace pageblame {
namespace {

absl::Status Failed(const std::string& path, int err) {
  const std::string why = absl::StrCat("cannot write ", path, ": ", std::strerror(err));
  return err == EACCES || err == EPERM || err == EROFS ? absl::PermissionDeniedError(why)
                                                        : absl::UnavailableError(why);
}

}  // namespace

absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes, mode_t mode) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string temp = absl::StrCat(dir, "/.", base, ".XXXXXX");
  const int fd = ::mkstemp(temp.data());  // O_EXCL, 0600
  if (fd < 0) return Failed(path, errno);
  bool ok = ::fchmod(fd, mode) == 0;
  for (size_t done = 0; ok && done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<size_t>(n);
  }
  const int err = errno;
  if (::close(fd) != 0 && ok) ok = false;
  if (ok && std::rename(temp.c_str(), path.c_str()) == 0) return absl::OkStatus();
  const int failed = ok ? errno : err;
  ::unlink(temp.c_str());
  return Failed(path, failed);
}

}  // namespace pageblame

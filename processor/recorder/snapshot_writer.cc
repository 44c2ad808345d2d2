#include "processor/recorder/snapshot_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "processor/residency/snapshot_file.h"

namespace pageblame::recorder {
namespace {

absl::Status FileError(absl::string_view what, const std::string& path) {
  return absl::UnavailableError(absl::StrCat("cannot ", what, " ", path, ": ", std::strerror(errno)));
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace

absl::Status SnapshotWriter::SetAside(const std::string& trace, bool trace_moves) {
  if (!trace_moves) return absl::OkStatus();
  const std::string current = residency::SnapshotPathFor(trace);
  const std::string old = residency::SnapshotPathFor(trace + ".old");
  if (Exists(current)) {
    if (std::rename(current.c_str(), old.c_str()) != 0) return FileError("rename", current);
  } else if (Exists(old) && ::unlink(old.c_str()) != 0) {
    return FileError("remove", old);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<SnapshotWriter>> SnapshotWriter::Create(const std::string& path,
                                                                         int32_t clockid) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return FileError("create", path);
  std::unique_ptr<SnapshotWriter> w(new SnapshotWriter(path, fd));
  if (absl::Status s = w->WriteAll(residency::EncodeHeader(clockid)); !s.ok()) return s;
  return w;
}

SnapshotWriter::~SnapshotWriter() { ::close(fd_); }

absl::Status SnapshotWriter::Append(const residency::ResidencySnapshot& s) {
  const std::string bytes = residency::EncodeSnapshot(s);
  std::lock_guard<std::mutex> lock(mu_);
  return WriteAll(bytes);
}

// One write() of the whole record; a short write (a full disk) is finished
// with more, so the record is whole or the error is said.
absl::Status SnapshotWriter::WriteAll(const std::string& bytes) {
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return FileError("write", path_);
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace pageblame::recorder

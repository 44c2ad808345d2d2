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

}  // namespace

absl::StatusOr<std::unique_ptr<SnapshotWriter>> SnapshotWriter::Create(int fd, std::string path, int32_t clockid) {
  return CreateWithHeader(fd, std::move(path), residency::EncodeHeader(clockid));
}

absl::StatusOr<std::unique_ptr<SnapshotWriter>> SnapshotWriter::CreateWithHeader(int fd, std::string path,
                                                                                 const std::string& header) {
  std::unique_ptr<SnapshotWriter> w(new SnapshotWriter(std::move(path), fd));
  if (absl::Status s = w->WriteAll(header); !s.ok()) return s;
  return w;
}

SnapshotWriter::~SnapshotWriter() { ::close(fd_); }

absl::Status SnapshotWriter::Append(const residency::ResidencySnapshot& s) {
  return AppendRecord(residency::EncodeSnapshot(s));
}

absl::Status SnapshotWriter::AppendRecord(const std::string& bytes) {
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

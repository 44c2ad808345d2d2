#include "processor/recorder/snapshot_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "processor/base/status_macros.h"
#include "processor/base/write_all.h"
#include "processor/residency/snapshot_file.h"

namespace pageblame::recorder {
namespace {

absl::Status FileError(absl::string_view what, const std::string& path, int err = errno) {
  return absl::UnavailableError(absl::StrCat("cannot ", what, " ", path, ": ", std::strerror(err)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<SnapshotWriter>> SnapshotWriter::Create(int fd, std::string path, int32_t clockid) {
  return CreateWithHeader(fd, std::move(path), residency::EncodeHeader(clockid));
}

absl::StatusOr<std::unique_ptr<SnapshotWriter>> SnapshotWriter::CreateWithHeader(int fd, std::string path,
                                                                                 const std::string& header) {
  std::unique_ptr<SnapshotWriter> w(new SnapshotWriter(std::move(path), fd));
  if (absl::Status s = w->WriteAll(fd, header); !s.ok()) return s;
  w->header_ = header;
  w->file_bytes_ = header.size();
  return w;
}

SnapshotWriter::~SnapshotWriter() { ::close(fd_); }

absl::Status SnapshotWriter::Append(const residency::ResidencySnapshot& s) {
  return AppendRecord(residency::EncodeSnapshot(s),
                      {.pid = s.pid, .time = s.time, .pinned = s.reason != residency::SnapshotReason::kPeriodic});
}

absl::Status SnapshotWriter::AppendRecord(const std::string& bytes, SnapshotRecordInfo info) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(WriteAll(fd_, bytes));
  info.bytes = bytes.size();
  ++thinned_.records;
  if (thinning_.budget > 0 && thinned_.error.empty()) {
    records_.push_back({file_bytes_, info});
    file_bytes_ += bytes.size();
    MaybeThin(info.time);
  } else {
    file_bytes_ += bytes.size();
  }
  return absl::OkStatus();
}

void SnapshotWriter::ThinWithin(Thinning thinning) {
  std::lock_guard<std::mutex> lock(mu_);
  thinning_ = std::move(thinning);
}

SnapshotWriter::ThinSummary SnapshotWriter::Thinned() const {
  std::lock_guard<std::mutex> lock(mu_);
  ThinSummary t = thinned_;
  t.file_bytes = file_bytes_;
  return t;
}

void SnapshotWriter::MaybeThin(uint64_t now) {
  std::vector<SnapshotRecordInfo> infos;
  infos.reserve(records_.size());
  for (const Record& r : records_) infos.push_back(r.info);
  const uint64_t room = thinning_.budget > header_.size() ? thinning_.budget - header_.size() : 0;
  const bool over = file_bytes_ > thinning_.budget;
  // Over budget: thin to three quarters of it, so the next records do not
  // force a rewrite each.
  SnapshotThinning::Plan plan = SnapshotThinning::Choose(infos, now, over ? room / 4 * 3 : room);
  if (plan.dropped == 0 || (!over && plan.dropped_bytes * 4 < file_bytes_)) return;
  if (absl::Status st = Rewrite(plan); !st.ok()) {
    thinned_.error = std::string(st.message());
    records_.clear();
    return;
  }
  thinned_.dropped += plan.dropped;
  ++thinned_.rewrites;
}

// The kept records into a new file beside the old one, then renamed over
// it; the new file is then the one appended to.
absl::Status SnapshotWriter::Rewrite(const SnapshotThinning::Plan& plan) {
  const std::string tmp = thinning_.name + ".thin";
  const std::string tmp_path = absl::StrCat(path_, ".thin");
  // Ours from an earlier failure, or planted: removing a link removes the
  // link, never what it names.
  if (::unlinkat(thinning_.dir_fd, tmp.c_str(), 0) != 0 && errno != ENOENT) return FileError("remove", tmp_path);
  const int fd = ::openat(thinning_.dir_fd, tmp.c_str(),
                          O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return FileError("create", tmp_path);
  std::vector<Record> kept;
  absl::Status st = WriteAll(fd, header_);
  if (st.ok()) st = CopyKept(fd, plan, &kept);
  struct stat made, there;
  if (st.ok() && ::renameat(thinning_.dir_fd, tmp.c_str(), thinning_.dir_fd, thinning_.name.c_str()) != 0) {
    st = FileError(absl::StrCat("rename ", tmp_path, " to"), path_);
  }
  // In a directory others may write (--force) the name could have been
  // swapped between our create and the rename: the file now at the name
  // must be the one written.
  if (st.ok() && (::fstat(fd, &made) != 0 ||
                  ::fstatat(thinning_.dir_fd, thinning_.name.c_str(), &there, AT_SYMLINK_NOFOLLOW) != 0 ||
                  made.st_dev != there.st_dev || made.st_ino != there.st_ino)) {
    st = absl::FailedPreconditionError(absl::StrCat(path_, " was replaced by another file while it was thinned"));
  }
  if (!st.ok()) {
    ::unlinkat(thinning_.dir_fd, tmp.c_str(), 0);
    ::close(fd);
    return st;
  }
  ::close(fd_);
  fd_ = fd;
  records_ = std::move(kept);
  file_bytes_ = records_.empty() ? header_.size() : records_.back().offset + records_.back().info.bytes;
  return absl::OkStatus();
}

absl::Status SnapshotWriter::CopyKept(int to, const SnapshotThinning::Plan& plan, std::vector<Record>* kept) {
  uint64_t offset = header_.size();
  std::string buffer;
  for (size_t i = 0; i < records_.size(); ++i) {
    if (!plan.keep[i]) continue;
    const Record& r = records_[i];
    buffer.resize(r.info.bytes);
    for (size_t done = 0; done < buffer.size();) {
      const ssize_t n = ::pread(fd_, buffer.data() + done, buffer.size() - done, r.offset + done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return FileError("read back", path_);
      done += static_cast<size_t>(n);
    }
    RETURN_IF_ERROR(WriteAll(to, buffer));
    kept->push_back({offset, r.info});
    offset += r.info.bytes;
  }
  return absl::OkStatus();
}

// The whole record; a short write (a full disk) is finished with more, so
// the record is whole or the error is said.
absl::Status SnapshotWriter::WriteAll(int fd, const std::string& bytes) {
  const int err = pageblame::WriteAll(fd, bytes, /*at=*/-1);
  return err == 0 ? absl::OkStatus() : FileError("write", path_, err);
}

}  // namespace pageblame::recorder

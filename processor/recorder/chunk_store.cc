#include "processor/recorder/chunk_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "processor/base/status_macros.h"
#include "processor/base/write_all.h"
#include "processor/perf/chunk_files.h"
#include "processor/replay/recording_file.h"

namespace pageblame::recorder {
namespace {

using Dir = std::unique_ptr<DIR, int (*)(DIR*)>;

// The entries of the directory at `fd` (a fresh descriptor of it: fdopendir
// takes its own and moves its offset).
Dir OpenDir(int dir_fd, const char* name) {
  const int fd = ::openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  DIR* d = fd < 0 ? nullptr : ::fdopendir(fd);
  if (d == nullptr && fd >= 0) ::close(fd);
  return Dir(d, ::closedir);
}

absl::Status Failed(const char* what, const std::string& path) {
  return absl::UnavailableError(absl::StrCat("cannot ", what, " ", path, ": ", std::strerror(errno)));
}

}  // namespace

std::string ChunkStore::PathOf(const std::string& name) const {
  const size_t slash = trace_.rfind('/');
  return slash == std::string::npos ? name : trace_.substr(0, slash + 1) + name;
}

std::vector<std::string> ChunkStore::Closed() const {
  std::vector<std::string> out;
  Dir d = OpenDir(dir_fd_, ".");
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d.get())) {
    if (perf::ChunkFiles::IsChunkOf(e->d_name, base_)) out.emplace_back(e->d_name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

absl::StatusOr<int> ChunkStore::Open(const std::string& name) const {
  const std::string path = PathOf(name);
  const int fd = ::openat(dir_fd_, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Failed("open the chunk", path);
  struct stat st;
  std::string wrong;
  if (::fstat(fd, &st) != 0) {
    wrong = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    wrong = "not a regular file";
  } else if (st.st_uid != ::geteuid()) {
    wrong = absl::StrCat("owned by uid ", st.st_uid, ", not by the recorder (", ::geteuid(), ")");
  } else if (st.st_nlink != 1) {
    wrong = absl::StrCat(st.st_nlink, " links to it (perf makes one)");
  }
  if (wrong.empty()) return fd;
  ::close(fd);
  return absl::PermissionDeniedError(absl::StrCat(path, ": not a chunk perf wrote: ", wrong));
}

absl::Status ChunkStore::Remove(const std::string& name) const {
  if (!perf::ChunkFiles::IsChunkOf(name, base_)) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": not a chunk of ", base_));
  }
  if (::unlinkat(dir_fd_, name.c_str(), 0) != 0) return Failed("remove", PathOf(name));
  return absl::OkStatus();
}

uint64_t ChunkStore::RuntimeDirBytes(const std::string& name) const {
  uint64_t total = 0;
  const int fd = ::openat(dir_fd_, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return 0;
  Dir d = OpenDir(fd, ".");
  struct stat st;
  while (const dirent* e = d != nullptr ? ::readdir(d.get()) : nullptr) {
    if (::fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) {
      total += static_cast<uint64_t>(st.st_blocks) * 512;
    }
  }
  ::close(fd);
  return total;
}

uint64_t ChunkStore::DiskBytes() const {
  uint64_t total = 0;
  Dir d = OpenDir(dir_fd_, ".");
  if (d == nullptr) return 0;
  const std::string side = base_ + ".";
  while (const dirent* e = ::readdir(d.get())) {
    const std::string name = e->d_name;
    if (name != base_ && (!absl::StartsWith(name, side) || absl::StartsWith(name, base_ + ".old"))) continue;
    struct stat st;
    if (::fstatat(dir_fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISREG(st.st_mode)) total += static_cast<uint64_t>(st.st_blocks) * 512;
    if (S_ISDIR(st.st_mode)) total += RuntimeDirBytes(name);
  }
  return total;
}

std::string ChunkStore::IndexName() const { return replay::RecordingFile::PathFor(base_, false); }

absl::Status ChunkStore::WriteIndex(const std::string& bytes) const {
  ASSIGN_OR_RETURN(std::unique_ptr<IndexFile> f, NewIndex(0));
  f->Append(bytes);
  return f->Commit();
}

absl::StatusOr<std::unique_ptr<ChunkStore::IndexFile>> ChunkStore::NewIndex(uint64_t limit) const {
  const std::string tmp = IndexName() + ".new";
  ::unlinkat(dir_fd_, tmp.c_str(), 0);
  const int fd = ::openat(dir_fd_, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Failed("create", PathOf(tmp));
  return std::unique_ptr<IndexFile>(new IndexFile(this, fd, limit == 0 ? UINT64_MAX : limit));
}

ChunkStore::IndexFile::~IndexFile() {
  if (fd_ < 0) return;
  ::close(fd_);
  ::unlinkat(store_->dir_fd_, (store_->IndexName() + ".new").c_str(), 0);
}

void ChunkStore::IndexFile::Take(std::string_view bytes) {
  // (written() counts `bytes` already.)
  if (!overflowed()) Write(bytes, -1);
}

void ChunkStore::IndexFile::Overwrite(uint64_t at, std::string_view bytes) {
  if (!overflowed() && at <= written() && bytes.size() <= written() - at) Write(bytes, static_cast<int64_t>(at));
}

// All of `bytes` at `at` (pwrite) or at the end (at < 0); the first error kept.
void ChunkStore::IndexFile::Write(std::string_view bytes, int64_t at) {
  if (!status_.ok()) return;
  if (const int err = WriteAll(fd_, bytes, static_cast<off_t>(at)); err != 0) {
    errno = err;
    status_ = Failed("write", store_->PathOf(store_->IndexName()));
  }
}

absl::Status ChunkStore::IndexFile::Commit() {
  const std::string name = store_->IndexName();
  const std::string tmp = name + ".new";
  if (overflowed()) return absl::FailedPreconditionError(absl::StrCat(store_->PathOf(name), ": the index passed its limit"));
  const bool ok = status_.ok() && ::fsync(fd_) == 0;
  ::close(fd_);
  fd_ = -1;
  // The new index takes the name at once (renameat replaces a link, never follows it).
  if (!ok || ::renameat(store_->dir_fd_, tmp.c_str(), store_->dir_fd_, name.c_str()) != 0) {
    const absl::Status s = status_.ok() ? Failed("write", store_->PathOf(name)) : status_;
    ::unlinkat(store_->dir_fd_, tmp.c_str(), 0);
    return s;
  }
  // The rename itself reaches the disk: after a crash or a power cut the
  // name is the old index or the new one, whole (the new one is synced).
  ::fsync(store_->dir_fd_);
  return absl::OkStatus();
}

}  // namespace pageblame::recorder

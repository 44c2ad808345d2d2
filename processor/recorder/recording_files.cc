#include "processor/recorder/recording_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "processor/base/write_all.h"
#include "processor/heap/heap_snapshot_file.h"
#include "processor/regions/runtime_table_store.h"
#include "processor/replay/attach_maps.h"
#include "processor/residency/snapshot_file.h"

namespace pageblame::recorder {
namespace {

constexpr char kOld[] = ".old";  // perf's backup suffix

std::string RssName(const std::string& trace) { return residency::SnapshotPathFor(trace); }
std::string HeapName(const std::string& trace) { return heap::HeapSnapshotPathFor(trace); }
std::string RuntimeName(const std::string& trace) { return regions::RuntimeTableStore::DirFor(trace); }
std::string AttachMapsName(const std::string& trace) { return replay::AttachMaps::PathFor(trace); }

absl::Status Failed(absl::string_view what, const std::string& path, int err = errno) {
  return absl::UnavailableError(absl::StrCat("cannot ", what, " ", path, ": ", std::strerror(err)));
}

std::string ModeOf(mode_t mode) {
  char out[8];
  std::snprintf(out, sizeof out, "%04o", static_cast<unsigned>(mode & 07777));
  return out;
}

bool OwnedByUs(const struct stat& st) { return st.st_uid == 0 || st.st_uid == ::geteuid(); }
bool OthersMayWrite(const struct stat& st) { return (st.st_mode & (S_IWGRP | S_IWOTH)) != 0; }

// Whether only root and the user running pageblame can change what `dir`
// (a canonical path) and every directory above it name: each is theirs, and
// one others may write is sticky (they cannot move what is not theirs out
// of it).
bool OnlyUsCanChange(const std::string& dir) {
  std::string path = dir;
  for (bool first = true;; first = false) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || !OwnedByUs(st)) return false;
    if (OthersMayWrite(st) && (first || (st.st_mode & S_ISVTX) == 0)) return false;
    if (path == "/") return true;
    const size_t slash = path.rfind('/');
    path = slash == 0 ? "/" : path.substr(0, slash);
  }
}

// The canonical path of an open directory.
std::string PathOfFd(int fd) {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink(absl::StrCat("/proc/self/fd/", fd).c_str(), buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

// What is at `name` in the directory, not following a link; nullopt-like
// false when nothing is.
bool Lstat(int dir_fd, const std::string& name, struct stat* st) {
  return ::fstatat(dir_fd, name.c_str(), st, AT_SYMLINK_NOFOLLOW) == 0;
}

const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "a file";
}

absl::Status WriteAll(int fd, absl::string_view bytes, const std::string& path) {
  const int err = pageblame::WriteAll(fd, std::string_view(bytes.data(), bytes.size()), /*at=*/-1);
  return err == 0 ? absl::OkStatus() : Failed("write", path, err);
}

}  // namespace

absl::StatusOr<std::unique_ptr<RecordingFiles>> RecordingFiles::Prepare(const std::string& trace, bool force) {
  if (trace.empty() || trace == "-" || trace.back() == '/') {
    return absl::InvalidArgumentError(absl::StrCat("'", trace, "' names no file for the trace"));
  }
  const size_t slash = trace.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : trace.substr(0, slash);
  const std::string base = slash == std::string::npos ? trace : trace.substr(slash + 1);
  if (base == "." || base == "..") return absl::InvalidArgumentError(absl::StrCat("'", trace, "' names a directory"));
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return Failed("open the directory", dir);
  std::unique_ptr<RecordingFiles> files(new RecordingFiles(trace, dir, base, dir_fd));
  if (absl::Status s = files->Judge(force); !s.ok()) return s;
  if (absl::Status s = files->SetAsideOld(); !s.ok()) return s;
  if (absl::Status s = files->CreateTrace(); !s.ok()) return s;
  return files;
}

RecordingFiles::~RecordingFiles() {
  if (runtime_fd_ >= 0) ::close(runtime_fd_);
  if (trace_fd_ >= 0) ::close(trace_fd_);
  ::close(dir_fd_);
}

std::string RecordingFiles::PathOf(absl::string_view name) const {
  return dir_ == "." ? std::string(name) : absl::StrCat(dir_ == "/" ? "" : dir_, "/", name);
}

absl::Status RecordingFiles::Judge(bool force) {
  struct stat st;
  if (::fstat(dir_fd_, &st) != 0) return Failed("examine", dir_);
  if (OthersMayWrite(st) && !force) {
    return absl::PermissionDeniedError(absl::StrCat(
        dir_, " is writable by ", (st.st_mode & S_IWOTH) ? "anyone" : "its group", " (mode ", ModeOf(st.st_mode),
        "): another user could plant links or files at the names the trace and its side files take there; "
        "record into a directory of your own, or pass --force (files are then still made new, never through "
        "a link)"));
  }
  through_fd_ = !OnlyUsCanChange(PathOfFd(dir_fd_));
  return absl::OkStatus();
}

absl::Status RecordingFiles::SetAsideOld() {
  struct stat st;
  bool moved = false;
  if (Lstat(dir_fd_, base_, &st)) {
    if (S_ISLNK(st.st_mode) || (S_ISREG(st.st_mode) && st.st_size > 0)) {
      moved = true;
    } else if (!S_ISREG(st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat(trace_, " is ", KindOf(st.st_mode), ", not a trace: name another file"));
    } else if (::unlinkat(dir_fd_, base_.c_str(), 0) != 0) {  // empty: perf would write over it
      return Failed("remove", trace_);
    }
  }
  if (moved) {
    struct stat old;
    const std::string old_name = base_ + kOld;
    set_aside_.replaced_old = Lstat(dir_fd_, old_name, &old);
    if (set_aside_.replaced_old && S_ISDIR(old.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot keep ", trace_, " as ", PathOf(old_name), ": that is a directory"));
    }
    if (::renameat(dir_fd_, base_.c_str(), dir_fd_, old_name.c_str()) != 0) return Failed("rename", trace_);
    set_aside_.moved = true;
    set_aside_.was_link = S_ISLNK(st.st_mode);
  }
  return SetAsideSideFiles(moved);
}

// The side files go with their trace: to TRACE.old's names when it moved
// (replacing the older TRACE.old's), else they belong to no trace and go.
absl::Status RecordingFiles::SetAsideSideFiles(bool moved) {
  const std::string runtime = RuntimeName(base_), old_runtime = RuntimeName(base_ + kOld);
  struct stat st;
  if (absl::Status s = SetAsideFile(RssName(base_), RssName(base_ + kOld), moved, &set_aside_.rss); !s.ok()) return s;
  if (absl::Status s = SetAsideFile(HeapName(base_), HeapName(base_ + kOld), moved, &set_aside_.heap); !s.ok()) {
    return s;
  }
  if (absl::Status s = SetAsideFile(AttachMapsName(base_), AttachMapsName(base_ + kOld), moved,
                                    &set_aside_.attach_maps);
      !s.ok()) {
    return s;
  }
  if (!moved) return ClearRuntimeDir(runtime);
  if (absl::Status s = ClearRuntimeDir(old_runtime); !s.ok()) return s;
  if (Lstat(dir_fd_, runtime, &st)) {
    if (::renameat(dir_fd_, runtime.c_str(), dir_fd_, old_runtime.c_str()) != 0) {
      return Failed("rename", PathOf(runtime));
    }
    set_aside_.runtime = S_ISDIR(st.st_mode);
  }
  return absl::OkStatus();
}

absl::Status RecordingFiles::SetAsideFile(const std::string& name, const std::string& old_name, bool moved,
                                          bool* moved_it) {
  struct stat st;
  if (!moved) {
    if (Lstat(dir_fd_, name, &st) && ::unlinkat(dir_fd_, name.c_str(), 0) != 0) return Failed("remove", PathOf(name));
    return absl::OkStatus();
  }
  if (Lstat(dir_fd_, name, &st)) {
    if (::renameat(dir_fd_, name.c_str(), dir_fd_, old_name.c_str()) != 0) return Failed("rename", PathOf(name));
    *moved_it = true;
  } else if (Lstat(dir_fd_, old_name, &st) && ::unlinkat(dir_fd_, old_name.c_str(), 0) != 0) {
    return Failed("remove", PathOf(old_name));
  }
  return absl::OkStatus();
}

bool RecordingFiles::IsRuntimeDirFile(absl::string_view name) {
  if (regions::RuntimeTableStore::ParseName(name)) return true;
  uint32_t pid = 0;
  for (auto [prefix, suffix] : {std::pair<const char*, const char*>{"perf-", ".map"}, {"jit-", ".dump"}}) {
    absl::string_view n = name;
    if (absl::ConsumePrefix(&n, prefix) && absl::ConsumeSuffix(&n, suffix) && absl::SimpleAtoi(n, &pid)) return true;
  }
  return false;
}

// Removes the runtime tables at `name` and the directory; a link or file
// there is removed itself (never followed). Anything else in the directory
// is the user's: said, and nothing is recorded over it.
absl::Status RecordingFiles::ClearRuntimeDir(const std::string& name) {
  struct stat st;
  if (!Lstat(dir_fd_, name, &st)) return absl::OkStatus();
  if (!S_ISDIR(st.st_mode)) {
    if (::unlinkat(dir_fd_, name.c_str(), 0) != 0) return Failed("remove", PathOf(name));
    return absl::OkStatus();
  }
  const int fd = ::openat(dir_fd_, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  DIR* d = fd >= 0 ? ::fdopendir(fd) : nullptr;
  if (d == nullptr) {
    if (fd >= 0) ::close(fd);
    return Failed("open", PathOf(name));
  }
  std::vector<std::string> tables;
  while (const dirent* e = ::readdir(d)) {
    if (IsRuntimeDirFile(e->d_name)) tables.emplace_back(e->d_name);
  }
  for (const std::string& t : tables) ::unlinkat(::dirfd(d), t.c_str(), 0);
  ::closedir(d);
  if (::unlinkat(dir_fd_, name.c_str(), AT_REMOVEDIR) != 0) {
    if (errno == ENOTEMPTY || errno == EEXIST) {
      return absl::FailedPreconditionError(absl::StrCat(
          PathOf(name), " holds files that record did not make there: move them away, or name another trace"));
    }
    return Failed("remove", PathOf(name));
  }
  return absl::OkStatus();
}

absl::Status RecordingFiles::CreateTrace() {
  trace_fd_ = ::openat(dir_fd_, base_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (trace_fd_ < 0) return Failed("create", trace_);
  perf_output_ = through_fd_ ? absl::StrCat("/proc/self/fd/", trace_fd_) : trace_;
  return absl::OkStatus();
}

bool RecordingFiles::RemoveTraceIfEmpty() {
  struct stat mine, there;
  if (::fstat(trace_fd_, &mine) != 0 || mine.st_size != 0) return false;
  if (!Lstat(dir_fd_, base_, &there) || there.st_ino != mine.st_ino || there.st_dev != mine.st_dev) return false;
  return ::unlinkat(dir_fd_, base_.c_str(), 0) == 0;
}

bool RecordingFiles::PerfWroteHeader() const {
  struct stat st;
  return trace_fd_ >= 0 && ::fstat(trace_fd_, &st) == 0 && st.st_size > 0;
}

std::string RecordingFiles::SnapshotFileName() const { return RssName(base_); }

std::string RecordingFiles::HeapSnapshotFileName() const { return HeapName(base_); }

absl::StatusOr<int> RecordingFiles::CreateSnapshotFile() { return CreateAppendFile(RssName(base_)); }

absl::StatusOr<int> RecordingFiles::CreateHeapSnapshotFile() { return CreateAppendFile(HeapName(base_)); }

absl::StatusOr<int> RecordingFiles::CreateAppendFile(const std::string& name) {
  const int fd =
      ::openat(dir_fd_, name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  if (errno == EEXIST) {
    return absl::FailedPreconditionError(
        absl::StrCat(PathOf(name), " appeared after the recording began (not made by it): not written"));
  }
  return Failed("create", PathOf(name));
}

absl::StatusOr<int> RecordingFiles::RuntimeDir() {
  if (runtime_fd_ >= 0) return runtime_fd_;
  const std::string name = RuntimeName(base_);
  if (::mkdirat(dir_fd_, name.c_str(), 0700) != 0) {
    if (errno == EEXIST) {
      return absl::FailedPreconditionError(
          absl::StrCat(PathOf(name), " appeared after the recording began (not made by it): not written"));
    }
    return Failed("make", PathOf(name));
  }
  const int fd = ::openat(dir_fd_, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Failed("open", PathOf(name));
  struct stat st;
  // Between mkdirat and openat another user who can write the directory
  // (--force) could have put their own directory there.
  if (::fstat(fd, &st) != 0 || st.st_uid != ::geteuid()) {
    ::close(fd);
    return absl::FailedPreconditionError(absl::StrCat(PathOf(name), " was replaced by another user's directory"));
  }
  runtime_fd_ = fd;
  return runtime_fd_;
}

std::string RecordingFiles::RuntimeTablePath(absl::string_view name) const {
  return absl::StrCat(PathOf(RuntimeName(base_)), "/", name);
}

absl::Status RecordingFiles::WriteNew(int dir_fd, const std::string& name, const std::string& path,
                                      absl::string_view bytes) {
  const int fd = ::openat(dir_fd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, " appeared after the recording began (not made by it): not written"));
    }
    return Failed("create", path);
  }
  absl::Status s = WriteAll(fd, bytes, path);
  if (::close(fd) != 0 && s.ok()) s = Failed("write", path);
  if (!s.ok()) ::unlinkat(dir_fd, name.c_str(), 0);
  return s;
}

absl::Status RecordingFiles::WriteRuntimeTable(absl::string_view name, absl::string_view bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<int> dir = RuntimeDir();
  if (!dir.ok()) return dir.status();
  return WriteNew(*dir, std::string(name), RuntimeTablePath(name), bytes);
}

std::string RecordingFiles::AttachMapsPath() const { return PathOf(AttachMapsName(base_)); }

absl::Status RecordingFiles::WriteAttachMaps(absl::string_view bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  return WriteNew(dir_fd_, AttachMapsName(base_), AttachMapsPath(), bytes);
}

}  // namespace pageblame::recorder

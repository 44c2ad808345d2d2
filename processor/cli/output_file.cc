#include "processor/cli/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "processor/base/text_escape.h"
#include "processor/cli/usage.h"

namespace pageblame::cli {
namespace {

absl::Status CannotWrite(const std::string& path, int err) {
  return absl::PermissionDeniedError(absl::StrCat("cannot write ", path, ": ", std::strerror(err)));
}

// The input among `inputs` that is the file `out` names, if any.
std::optional<std::string> InputNamed(const struct stat& out, const std::vector<std::string>& inputs) {
  for (const std::string& in : inputs) {
    struct stat st;
    if (!in.empty() && in != "-" && ::stat(in.c_str(), &st) == 0 && st.st_dev == out.st_dev &&
        st.st_ino == out.st_ino) {
      return in;
    }
  }
  return std::nullopt;
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The mode a new file gets from open(2) with 0666 under the current umask.
mode_t NewFileMode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

}  // namespace

absl::StatusOr<std::unique_ptr<OutputFile>> OutputFile::Open(const std::optional<std::string>& path,
                                                              const std::vector<std::string>& inputs) {
  if (!path || *path == "-") return std::unique_ptr<OutputFile>(new OutputFile("", "", "", stdout));
  if (path->empty()) return absl::InvalidArgumentError("cannot write '': an empty output file name");
  struct stat st;
  if (::stat(path->c_str(), &st) != 0) {
    struct stat link;
    // A dangling symbolic link: written through, as a shell's '>' would.
    if (::lstat(path->c_str(), &link) == 0) return OpenDirect(*path);
    return OpenReplacing(*path, *path);
  }
  if (std::optional<std::string> in = InputNamed(st, inputs)) {
    return UsageError(absl::StrCat("-o ", *path, " is also an input of this command (", *in,
                                   "): writing the answer there would destroy it; name another file"));
  }
  if (S_ISDIR(st.st_mode)) return CannotWrite(*path, EISDIR);
  if (!S_ISREG(st.st_mode)) return OpenDirect(*path);
  char resolved[PATH_MAX];
  if (::realpath(path->c_str(), resolved) == nullptr) return CannotWrite(*path, errno);
  return OpenReplacing(*path, resolved);
}

absl::StatusOr<std::unique_ptr<OutputFile>> OutputFile::OpenDirect(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return CannotWrite(path, errno);
  return std::unique_ptr<OutputFile>(new OutputFile(path, path, "", f));
}

absl::StatusOr<std::unique_ptr<OutputFile>> OutputFile::OpenReplacing(const std::string& path,
                                                                      const std::string& target) {
  // Beside the target: the same file system, so the rename is atomic.
  std::string temp = absl::StrCat(DirectoryOf(target), "/.", BaseName(target), ".pageblame-XXXXXX");
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) return CannotWrite(path, errno);
  // mkstemp makes the file 0600: give it the mode (and owner) the target has,
  // or the one a new file would get.
  struct stat old;
  if (::stat(target.c_str(), &old) == 0) {
    (void)::fchown(fd, old.st_uid, old.st_gid);
    (void)::fchmod(fd, old.st_mode & 07777);
  } else {
    (void)::fchmod(fd, NewFileMode());
  }
  std::FILE* f = ::fdopen(fd, "wb");
  if (f == nullptr) {
    const int err = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    return CannotWrite(path, err);
  }
  return std::unique_ptr<OutputFile>(new OutputFile(path, target, std::move(temp), f));
}

OutputFile::~OutputFile() {
  if (is_stdout() || closed_) return;
  // Not closed: the command failed before its answer was whole. The target
  // keeps what it had; only the temporary file pageblame made goes.
  std::fclose(file_);
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

absl::Status OutputFile::WriteError() const {
  // Standard output says it as main() does for a failed flush.
  if (is_stdout()) return absl::UnavailableError(absl::StrCat("writing the output failed: ", std::strerror(errno)));
  return absl::UnavailableError(absl::StrCat("cannot write ", path_, ": ", std::strerror(errno)));
}

absl::Status OutputFile::Write(std::string_view bytes) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) return WriteError();
  return absl::OkStatus();
}

absl::Status OutputFile::WriteText(std::string text) { return Write(EscapeText(std::move(text))); }

absl::Status OutputFile::WriteTextPiece(std::string_view piece) {
  const size_t cut = piece.rfind('\n');
  if (cut == std::string_view::npos) {
    pending_.append(piece);
    return absl::OkStatus();
  }
  std::string lines = std::move(pending_);
  lines.append(piece.substr(0, cut + 1));
  pending_.assign(piece.substr(cut + 1));
  return Write(EscapeText(std::move(lines)));
}

absl::Status OutputFile::Close() {
  // (A failed write leaves the file's error flag set: reported below.)
  const absl::Status rest = pending_.empty() ? absl::OkStatus() : Write(EscapeText(std::exchange(pending_, {})));
  if (is_stdout() || closed_) return rest;
  closed_ = true;
  const bool flushed = std::fflush(file_) == 0 && !std::ferror(file_);
  const int saved = errno;
  const bool closed = std::fclose(file_) == 0;
  bool placed = flushed && closed;
  if (placed && !temp_.empty()) placed = ::rename(temp_.c_str(), target_.c_str()) == 0;
  if (placed) return absl::OkStatus();
  errno = flushed ? errno : saved;
  absl::Status s = WriteError();
  if (!temp_.empty()) ::unlink(temp_.c_str());
  return s;
}

}  // namespace pageblame::cli

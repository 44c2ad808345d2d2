#include "processor/cli/output_file.h"

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace pageblame::cli {

absl::StatusOr<std::unique_ptr<OutputFile>> OutputFile::Open(const std::optional<std::string>& path) {
  if (!path || *path == "-") return std::unique_ptr<OutputFile>(new OutputFile("", stdout));
  if (path->empty()) return absl::InvalidArgumentError("cannot write '': an empty output file name");
  std::FILE* f = std::fopen(path->c_str(), "wb");
  if (f == nullptr) {
    return absl::PermissionDeniedError(absl::StrCat("cannot write ", *path, ": ", std::strerror(errno)));
  }
  return std::unique_ptr<OutputFile>(new OutputFile(*path, f));
}

OutputFile::~OutputFile() {
  if (is_stdout() || closed_) return;
  // Not closed: the command failed before its answer was whole.
  std::fclose(file_);
  std::remove(path_.c_str());
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

absl::Status OutputFile::Close() {
  if (is_stdout() || closed_) return absl::OkStatus();
  closed_ = true;
  const bool flushed = std::fflush(file_) == 0 && !std::ferror(file_);
  const int saved = errno;
  const bool closed = std::fclose(file_) == 0;
  if (flushed && closed) return absl::OkStatus();
  errno = flushed ? errno : saved;
  absl::Status s = WriteError();
  std::remove(path_.c_str());
  return s;
}

}  // namespace pageblame::cli

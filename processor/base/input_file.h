// InputFile: a file pageblame reads, checked for its kind and size before
// anything is read, so that no name the user (or a trace) gives can crash,
// hang or exhaust memory:
//   - a directory is refused at Open ("PATH: is a directory, not a WHAT");
//   - a FIFO is opened without waiting for a writer (O_NONBLOCK, then
//     blocking reads: a FIFO nobody writes reads as empty);
//   - Accept::kRegular refuses anything but a regular file (side files such
//     as perf maps: a FIFO, device or socket there is a mistake or a trap);
//     kRegularOrStream also takes pipes and devices (`<(cat maps)`, /dev/stdin);
//   - ReadAll reads at most kTextLimit bytes of a regular file (a larger
//     one is refused before it is read) and kStreamLimit of a pipe or device
//     (an endless stream such as /dev/zero is refused when it passes it).
//
//   ASSIGN_OR_RETURN(std::unique_ptr<InputFile> f,
//                    InputFile::Open(path, "region table", InputFile::Accept::kRegularOrStream));
//   if (f->is_regular()) ASSIGN_OR_RETURN(std::string head, f->ReadAt(0, 64));
//   ASSIGN_OR_RETURN(std::string text, f->ReadAll());
//
// Errors name the path. The descriptor is closed when the object goes.
#ifndef PAGEBLAME_BASE_INPUT_FILE_H_
#define PAGEBLAME_BASE_INPUT_FILE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace pageblame {

class InputFile {
 public:
  enum class Accept { kRegular, kRegularOrStream };
  // The most ReadAll reads: far above any real region table, address list or
  // perf map (a long-running node service's perf map can reach hundreds of
  // MiB), far below what would exhaust a machine.
  static constexpr uint64_t kTextLimit = uint64_t{1} << 30;
  static constexpr uint64_t kStreamLimit = uint64_t{256} << 20;

  // `what` names the file's role in messages ("region table", "perf map").
  static absl::StatusOr<std::unique_ptr<InputFile>> Open(const std::string& path, absl::string_view what,
                                                         Accept accept);
  // Open + ReadAll.
  static absl::StatusOr<std::string> ReadWhole(const std::string& path, absl::string_view what, Accept accept);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::string& path() const { return path_; }
  int fd() const { return fd_; }
  // A regular file: size() is its size and ReadAt works.
  bool is_regular() const { return regular_; }
  uint64_t size() const { return size_; }

  // Hands the descriptor to the caller (who closes it); the object is then
  // empty. For readers that keep their own descriptor (libelf).
  int Release();

  // Up to `n` bytes at `offset` (fewer at the end of the file).
  absl::StatusOr<std::string> ReadAt(uint64_t offset, size_t n) const;
  // Everything from the current position to the end (the whole file for a
  // fresh InputFile; ReadAt does not move the position), at most kTextLimit
  // or kStreamLimit.
  absl::StatusOr<std::string> ReadAll() const;

 private:
  InputFile(std::string path, std::string what, int fd, bool regular, uint64_t size)
      : path_(std::move(path)), what_(std::move(what)), fd_(fd), regular_(regular), size_(size) {}
  uint64_t Limit() const { return regular_ ? kTextLimit : kStreamLimit; }
  absl::Status TooLarge() const;

  std::string path_;
  std::string what_;
  int fd_;
  bool regular_;
  uint64_t size_;
};

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_INPUT_FILE_H_

// Front-to-back reading of one section of a MappedFile through a small
// buffer: the perf.data data section, which can be GBs. The kernel copies
// each part of the file once (pread) into a window that stays in the CPU's
// cache while the reader parses it; records are then handed out as spans
// into the window, with no further copy.
//
//   FileWindow w(file.get(), begin, end);
//   ASSIGN_OR_RETURN(const uint8_t* p, w.At(offset, 8));  // 8 bytes at offset
//
// Why not the map itself: for a one-pass read of a big file, mapping it costs
// more than copying it. Measured on the 596 MB benchmark trace
// (bench/HISTORY.md, "Tried and not kept"): page-table work to map and unmap 145 k pages (on a
// helper thread, to keep RSS flat) plus cache misses on every record came to
// ~0.15 s more CPU than reading the same bytes through a 256 KiB window.
// RSS stays at the window's size however large the file is.
#ifndef PAGEBLAME_BASE_FILE_WINDOW_H_
#define PAGEBLAME_BASE_FILE_WINDOW_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "processor/base/mapped_file.h"

namespace pageblame {

class FileWindow {
 public:
  static constexpr size_t kDefaultWindow = 256 << 10;

  // Reads [begin, end) of `file` (which must outlive this). `window` bytes
  // are buffered; a request may not be longer than that.
  FileWindow(const MappedFile* file, uint64_t begin, uint64_t end,
             size_t window = kDefaultWindow);

  // The n bytes at `offset` (inside [begin, end)), valid until the next
  // call. Reading forward is cheap; going back re-reads. Errors: a range
  // outside [begin, end) or longer than the window (a caller's bug), and a
  // failed or short read (the file shrank, an I/O error), naming the file.
  absl::StatusOr<const uint8_t*> At(uint64_t offset, size_t n) {
    if (offset >= start_ && n <= filled_ && offset - start_ <= filled_ - n) {
      return buffer_.get() + (offset - start_);
    }
    return Fill(offset, n);
  }

 private:
  absl::StatusOr<const uint8_t*> Fill(uint64_t offset, size_t n);

  const MappedFile* file_;
  uint64_t begin_, end_;
  size_t window_;
  std::unique_ptr<uint8_t[]> buffer_;
  uint64_t start_ = 0;  // file offset of buffer_[0]
  size_t filled_ = 0;   // valid bytes in buffer_
};

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_FILE_WINDOW_H_

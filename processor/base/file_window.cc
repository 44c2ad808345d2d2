#include "processor/base/file_window.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace pageblame {

FileWindow::FileWindow(const MappedFile* file, uint64_t begin, uint64_t end, size_t window)
    : file_(file), begin_(begin), end_(end), window_(window),
      buffer_(new uint8_t[window]) {
  file_->AdviseSequentialRead(begin, end - begin);
}

absl::StatusOr<const uint8_t*> FileWindow::Fill(uint64_t offset, size_t n) {
  if (offset < begin_ || offset > end_ || n > end_ - offset || n > window_) {
    return absl::InternalError(absl::StrFormat(
        "%s: read of %u bytes at 0x%x outside [0x%x, 0x%x) or over the %u-byte window",
        file_->path(), n, offset, begin_, end_, window_));
  }
  // Read as much ahead as fits: one pread per window, not per record.
  const size_t want = static_cast<size_t>(std::min<uint64_t>(window_, end_ - offset));
  filled_ = 0;
  start_ = offset;
  absl::StatusOr<size_t> got = file_->ReadAt(offset, absl::MakeSpan(buffer_.get(), want));
  if (!got.ok()) return got.status();
  filled_ = *got;
  if (filled_ < n) {
    return absl::DataLossError(absl::StrFormat(
        "%s: the file ends at 0x%x while reading 0x%x: did it shrink while being read?",
        file_->path(), offset + filled_, offset + n));
  }
  return buffer_.get();
}

}  // namespace pageblame

#include "processor/perf/fd_input.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace pageblame::perf {

FdInput::FdInput(int fd, bool owned, size_t buffer_size)
    : fd_(fd), owned_(owned), buf_(new uint8_t[buffer_size]), capacity_(buffer_size) {}

FdInput::~FdInput() {
  if (owned_ && fd_ >= 0) ::close(fd_);
}

absl::StatusOr<bool> FdInput::Fill() {
  begin_ = end_ = 0;
  while (true) {
    ssize_t n = ::read(fd_, buf_.get(), capacity_);
    if (n > 0) {
      end_ = static_cast<size_t>(n);
      return true;
    }
    if (n == 0) return false;
    if (errno != EINTR) {
      return absl::UnavailableError(absl::StrCat("read failed: ", std::strerror(errno)));
    }
  }
}

absl::StatusOr<size_t> FdInput::Read(void* dst, size_t n) {
  uint8_t* out = static_cast<uint8_t*>(dst);
  size_t done = 0;
  while (done < n) {
    if (begin_ == end_) {
      absl::StatusOr<bool> more = Fill();
      if (!more.ok()) return more.status();
      if (!*more) break;
    }
    size_t k = std::min(n - done, end_ - begin_);
    std::memcpy(out + done, buf_.get() + begin_, k);
    begin_ += k;
    done += k;
  }
  offset_ += done;
  return done;
}

absl::StatusOr<uint64_t> FdInput::Skip(uint64_t n) {
  uint64_t done = 0;
  while (done < n) {
    if (begin_ == end_) {
      absl::StatusOr<bool> more = Fill();
      if (!more.ok()) return more.status();
      if (!*more) break;
    }
    size_t k = static_cast<size_t>(std::min<uint64_t>(n - done, end_ - begin_));
    begin_ += k;
    done += k;
  }
  offset_ += done;
  return done;
}

}  // namespace pageblame::perf

#include "processor/recorder/stderr_tail.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/strip.h"

namespace pageblame::recorder {

StderrTail::StderrTail() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;
  read_fd_ = fds[0];
  write_fd_ = fds[1];
}

StderrTail::~StderrTail() {
  if (reader_.joinable()) Finish();
  if (read_fd_ >= 0) ::close(read_fd_);
  if (write_fd_ >= 0) ::close(write_fd_);
}

void StderrTail::InChild() const {
  // dup2 clears close-on-exec on the copy: the child's fd 2 stays open.
  if (write_fd_ >= 0) ::dup2(write_fd_, STDERR_FILENO);
}

void StderrTail::Start() {
  if (write_fd_ < 0) return;
  ::close(write_fd_);
  write_fd_ = -1;
  reader_ = std::thread([this] { Pump(); });
}

void StderrTail::Pump() {
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(read_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    // Passed on at once: perf's progress and warnings reach the user as
    // they would without us.
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = ::write(STDERR_FILENO, buf + done, static_cast<size_t>(n - done));
      if (w <= 0 && errno != EINTR) break;
      if (w > 0) done += w;
    }
    std::lock_guard<std::mutex> lock(mu_);
    kept_.append(buf, static_cast<size_t>(n));
    if (kept_.size() > 2 * kKept) kept_.erase(0, kept_.size() - kKept);
  }
}

std::string StderrTail::Finish() {
  if (reader_.joinable()) reader_.join();
  std::lock_guard<std::mutex> lock(mu_);
  if (kept_.size() > kKept) kept_.erase(0, kept_.size() - kKept);
  return std::string(absl::StripAsciiWhitespace(kept_));
}

}  // namespace pageblame::recorder

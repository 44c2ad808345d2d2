#include "processor/recorder/dir_watch.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cstdint>
#include <string>

namespace pageblame::recorder {

DirWatch::DirWatch(int dir_fd) {
  wake_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  inotify_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (inotify_ < 0) return;
  const std::string dir = "/proc/self/fd/" + std::to_string(dir_fd);
  if (::inotify_add_watch(inotify_, dir.c_str(), IN_MOVED_TO | IN_ONLYDIR) < 0) {
    ::close(inotify_);
    inotify_ = -1;
  }
}

DirWatch::~DirWatch() {
  if (inotify_ >= 0) ::close(inotify_);
  if (wake_ >= 0) ::close(wake_);
}

void DirWatch::Wait(int timeout_ms) {
  if ((inotify_ < 0 || wake_ < 0) && timeout_ms > kFallbackMs) timeout_ms = kFallbackMs;
  struct pollfd fds[2] = {{inotify_, POLLIN, 0}, {wake_, POLLIN, 0}};
  // (a negative fd is skipped by poll)
  if (::poll(fds, 2, timeout_ms) <= 0) return;
  // Drained: what happened is all this says (the caller lists the
  // directory again); events made after this are the next wait's.
  char events[4096];
  if (inotify_ >= 0) {
    while (::read(inotify_, events, sizeof(events)) > 0) {
    }
  }
  uint64_t count;
  if (wake_ >= 0) (void)!::read(wake_, &count, sizeof(count));
}

void DirWatch::Wake() {
  const uint64_t one = 1;
  if (wake_ >= 0) (void)!::write(wake_, &one, sizeof(one));
}

}  // namespace pageblame::recorder

#include "processor/recorder/perf_control.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace pageblame::recorder {
namespace {

using Clock = std::chrono::steady_clock;

absl::Status Errno(const std::string& what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(errno)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<PerfControl>> PerfControl::Open() {
  std::unique_ptr<PerfControl> c(new PerfControl());
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/pageblame-perf-control.XXXXXX");
  if (::mkdtemp(dir.data()) == nullptr) return Errno(absl::StrCat("cannot make ", dir));
  c->dir_ = dir;  // from here the destructor removes what was made
  for (const char* name : {"ctl", "ack"}) {
    const std::string path = absl::StrCat(dir, "/", name);
    if (::mkfifo(path.c_str(), 0600) != 0) return Errno(absl::StrCat("cannot make the FIFO ", path));
    const int fd = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return Errno(absl::StrCat("cannot open ", path));
    (name[0] == 'c' ? c->ctl_ : c->ack_) = fd;
  }
  if (::pipe2(c->stop_, O_CLOEXEC) != 0) return Errno("pipe");
  return c;
}

PerfControl::~PerfControl() {
  Stop();
  for (int fd : {ctl_, ack_, stop_[0], stop_[1]}) {
    if (fd >= 0) ::close(fd);
  }
  if (dir_.empty()) return;
  for (const char* name : {"/ctl", "/ack"}) ::unlink((dir_ + name).c_str());
  ::rmdir(dir_.c_str());
}

std::vector<std::string> PerfControl::PerfArgs() const {
  return {"--control", absl::StrCat("fifo:", dir_, "/ctl,", dir_, "/ack")};
}

void PerfControl::Start() {
  if (!ticks_.joinable()) ticks_ = std::thread([this] { Tick(); });
}

void PerfControl::Tick() {
  for (;;) {
    pollfd stop = {stop_[0], POLLIN, 0};
    const int n = ::poll(&stop, 1, static_cast<int>(kTick.count()));
    if (n > 0 || (n < 0 && errno != EINTR)) return;  // Stop()
    Ping();
  }
}

bool PerfControl::Ping(std::chrono::milliseconds wait) {
  std::lock_guard<std::mutex> one_at_a_time(ping_);
  // An answer to a ping that timed out would pass for this one's.
  char stale[64];
  while (::read(ack_, stale, sizeof stale) > 0) {
  }
  static constexpr char kPing[] = "ping\n";
  if (::write(ctl_, kPing, sizeof kPing - 1) != sizeof kPing - 1) return false;  // perf reads no more
  return AwaitAnswer(wait);
}

bool PerfControl::AwaitAnswer(std::chrono::milliseconds wait) {
  const Clock::time_point deadline = Clock::now() + wait;
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd fds[2] = {{ack_, POLLIN, 0}, {stop_[0], POLLIN, 0}};
    const int n = ::poll(fds, 2, static_cast<int>(left));
    if (n < 0 && errno != EINTR) return false;
    if (n <= 0) continue;
    if (fds[1].revents != 0) return false;
    // perf writes "ack\n" and a NUL.
    char answer[64];
    const ssize_t got = ::read(ack_, answer, sizeof answer);
    if (got > 0 && std::memchr(answer, '\n', static_cast<size_t>(got)) != nullptr) {
      answered_.store(true, std::memory_order_release);
      return true;
    }
  }
}

bool PerfControl::Drain() { return Ping() && Ping(); }

void PerfControl::Stop() {
  if (stop_[1] >= 0) {
    const char c = 0;
    while (::write(stop_[1], &c, 1) < 0 && errno == EINTR) {
    }
  }
  if (ticks_.joinable()) ticks_.join();
}

}  // namespace pageblame::recorder

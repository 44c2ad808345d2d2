#include "processor/recorder/snapshot_loop.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_format.h"

namespace pageblame::recorder {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

SnapshotLoop::~SnapshotLoop() {
  if (thread_.joinable()) Finish(false);
  for (int fd : {wake_[0], wake_[1], target_fd_}) {
    if (fd >= 0) ::close(fd);
  }
}

void SnapshotLoop::StopPerfWhenGone(uint32_t pid) {
  target_ = pid;
  // A pidfd (Linux 5.3) becomes readable when the process ends.
  target_fd_ = static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0));
  if (target_fd_ < 0) {
    std::fprintf(stderr, "pageblame record: warning: cannot watch pid %u (%s): stop the recording yourself\n",
                 pid, std::strerror(errno));
  }
}

void SnapshotLoop::Start() {
  if (::pipe2(wake_, O_CLOEXEC) != 0) wake_[0] = wake_[1] = -1;
  thread_ = std::thread([this] { Run(); });
}

void SnapshotLoop::Finish(bool stop_snapshot) {
  if (!thread_.joinable()) return;
  const char c = 0;
  while (wake_[1] >= 0 && ::write(wake_[1], &c, 1) < 0 && errno == EINTR) {
  }
  thread_.join();
  if (stop_snapshot && !stopped_ && ready_) Snapshot(residency::SnapshotReason::kStop, false);
}

bool SnapshotLoop::CheckReady() {
  if (ready_) return true;
  if (stopped_ || (ready_fn_ && !ready_fn_())) return false;
  ready_ = true;
  if (on_ready_) on_ready_();
  return true;
}

void SnapshotLoop::Run() {
  const bool periodic = taker_ != nullptr && every_ > 0;
  const auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(every_));
  // The first snapshot is due once perf records.
  Clock::time_point due = Clock::now();
  if (!ready_fn_) CheckReady();
  for (;;) {
    int timeout = -1;
    if (!ready_ && !stopped_) {
      timeout = kReadyPollMs;
    } else if (periodic && !stopped_) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(due - Clock::now()).count();
      timeout = left > 0 ? static_cast<int>(left) : 0;
    }
    pollfd fds[3] = {{signal_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}, {target_fd_, POLLIN, 0}};
    const int n = ::poll(fds, target_fd_ >= 0 ? 3 : 2, timeout);
    if (n < 0 && errno != EINTR) return;
    if (n > 0 && fds[1].revents != 0) return;
    if (n > 0 && target_fd_ >= 0 && fds[2].revents != 0) OnTargetGone();
    if (n > 0 && (fds[0].revents & POLLIN)) {
      signalfd_siginfo info;
      if (::read(signal_fd_, &info, sizeof(info)) == sizeof(info)) OnSignal(static_cast<int>(info.ssi_signo));
    }
    if (!ready_ && CheckReady()) due = Clock::now();
    // After the stop snapshot perf is ending: a later one would lie after
    // the trace.
    if (ready_ && periodic && !stopped_ && Clock::now() >= due) {
      Snapshot(residency::SnapshotReason::kPeriodic, false);
      // Behind (a snapshot longer than the period): the next is a period
      // from now, not a burst to catch up.
      due += period;
      if (due < Clock::now()) due = Clock::now() + period;
    }
  }
}

void SnapshotLoop::OnTargetGone() {
  ::close(target_fd_);
  target_fd_ = -1;
  if (stopped_) return;
  std::fprintf(stderr, "pageblame record: pid %u ended: stopping the recording\n", target_);
  stopped_ = true;
  if (before_stop_) before_stop_();
  ::kill(perf_, SIGINT);
}

void SnapshotLoop::OnSignal(int sig) {
  if (sig == SIGUSR1) {
    if (taker_ == nullptr) {
      std::fprintf(stderr, "pageblame record: snapshots are off (--rss-every 0): SIGUSR1 ignored\n");
      return;
    }
    if (!CheckReady()) {
      std::fprintf(stderr, "pageblame record: perf does not record yet: no snapshot taken for SIGUSR1\n");
      return;
    }
    Snapshot(residency::SnapshotReason::kRequested, true);
    return;
  }
  // SIGINT or SIGTERM: the recording stops. The snapshot first, so that
  // it lies inside the trace; a second signal is passed on at once. Before
  // perf records there is nothing to take.
  if (!stopped_ && CheckReady()) {
    Snapshot(residency::SnapshotReason::kStop, false);
    if (before_stop_) before_stop_();
  }
  stopped_ = true;
  ::kill(perf_, sig);
}

void SnapshotLoop::Snapshot(residency::SnapshotReason reason, bool say) {
  if (taker_ == nullptr) return;
  const std::vector<uint32_t> pids = processes_.Update();
  const size_t n = taker_->Take(pids, reason);
  if (on_snapshot_) on_snapshot_(pids, reason);
  if (say) {
    const TakerSummary s = taker_->Summary();
    std::fprintf(stderr, "pageblame record: %s snapshot of %zu %s written to %s\n",
                 std::string(residency::ReasonName(reason)).c_str(), n, n == 1 ? "process" : "processes",
                 s.path.empty() ? "(no file)" : s.path.c_str());
  }
}

}  // namespace pageblame::recorder

// PerfControl against a stand-in for perf's side of `--control fifo:CTL,ACK`
// (opened as perf opens them: CTL read-write non-blocking, ACK write-only
// non-blocking, which fails unless someone reads it), answering "ack\n\0"
// to each "ping" line, as perf does.
#include "processor/recorder/perf_control.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace pageblame::recorder {
namespace {

using Clock = std::chrono::steady_clock;

// perf's side: answers `answers` pings (all if negative) until stopped.
class FakePerf {
 public:
  FakePerf(const std::string& control_arg, int answers) : answers_(answers) {
    const std::string paths = control_arg.substr(std::string("fifo:").size());
    const size_t comma = paths.find(',');
    ctl_ = ::open(paths.substr(0, comma).c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    ack_ = ::open(paths.substr(comma + 1).c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakePerf() {
    stop_ = true;
    thread_.join();
    ::close(ctl_);
    ::close(ack_);
  }
  bool opened() const { return ctl_ >= 0 && ack_ >= 0; }
  int pings() const { return pings_; }

 private:
  void Serve() {
    std::string line;
    while (!stop_) {
      pollfd p = {ctl_, POLLIN, 0};
      if (::poll(&p, 1, 10) <= 0) continue;
      char c;
      while (::read(ctl_, &c, 1) == 1) {
        if (c != '\n') {
          line += c;
          continue;
        }
        if (line == "ping") {
          ++pings_;
          if (answers_ < 0 || pings_ <= answers_) {
            static const char kAck[] = "ack\n";  // and its NUL, as perf writes it
            EXPECT_EQ(::write(ack_, kAck, sizeof kAck), static_cast<ssize_t>(sizeof kAck));
          }
        }
        line.clear();
      }
    }
  }

  const int answers_;
  int ctl_ = -1, ack_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<int> pings_{0};
  std::thread thread_;
};

TEST(PerfControlTest, PerfOpensBothFifosAndAnswersEachPing) {
  auto control = PerfControl::Open();
  ASSERT_TRUE(control.ok()) << control.status();
  const std::vector<std::string> args = (*control)->PerfArgs();
  ASSERT_EQ(args.size(), 2u);
  EXPECT_EQ(args[0], "--control");
  FakePerf perf(args[1], -1);
  ASSERT_TRUE(perf.opened()) << "perf's non-blocking open of ACK for writing needs a reader";
  EXPECT_FALSE((*control)->Answered());
  EXPECT_TRUE((*control)->Ping());
  EXPECT_TRUE((*control)->Answered());  // perf records: its main loop reads the FIFO
  EXPECT_TRUE((*control)->Drain());
  EXPECT_EQ(perf.pings(), 3);
}

TEST(PerfControlTest, AnUnansweredPingGivesUp) {
  auto control = PerfControl::Open();
  ASSERT_TRUE(control.ok()) << control.status();
  FakePerf perf((*control)->PerfArgs()[1], 0);  // answers none
  const Clock::time_point start = Clock::now();
  EXPECT_FALSE((*control)->Ping(std::chrono::milliseconds(100)));
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(100));
  EXPECT_FALSE((*control)->Drain());
  EXPECT_FALSE((*control)->Answered());
}

TEST(PerfControlTest, TicksPingWhileStartedAndStopEndsThem) {
  auto control = PerfControl::Open();
  ASSERT_TRUE(control.ok()) << control.status();
  FakePerf perf((*control)->PerfArgs()[1], -1);
  (*control)->Start();
  std::this_thread::sleep_for(PerfControl::kTick * 5);
  (*control)->Stop();
  // A ping written just before Stop() may still be on its way to perf.
  std::this_thread::sleep_for(PerfControl::kTick * 2);
  const int pinged = perf.pings();
  EXPECT_GE(pinged, 2);
  std::this_thread::sleep_for(PerfControl::kTick * 3);
  EXPECT_EQ(perf.pings(), pinged);
  EXPECT_FALSE((*control)->Ping()) << "a ping after Stop() does not wait for perf";
}

TEST(PerfControlTest, StopEndsAWaitingPingAtOnce) {
  auto control = PerfControl::Open();
  ASSERT_TRUE(control.ok()) << control.status();
  const Clock::time_point start = Clock::now();
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    (*control)->Stop();
  });
  EXPECT_FALSE((*control)->Ping(std::chrono::seconds(30)));  // nobody answers
  stopper.join();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
}

TEST(PerfControlTest, TheFifosGoWithIt) {
  std::string dir;
  {
    auto control = PerfControl::Open();
    ASSERT_TRUE(control.ok()) << control.status();
    const std::string arg = (*control)->PerfArgs()[1];
    dir = arg.substr(5, arg.find("/ctl,") - 5);
    struct stat st;
    ASSERT_EQ(::stat(dir.c_str(), &st), 0) << dir;
    EXPECT_EQ(st.st_mode & 0777, 0700u) << "others may not write perf's commands";
  }
  struct stat st;
  EXPECT_NE(::stat(dir.c_str(), &st), 0) << dir << " is left behind";
}

}  // namespace
}  // namespace pageblame::recorder

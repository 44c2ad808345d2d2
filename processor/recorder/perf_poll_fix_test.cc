// The fix for perf's spin (perf_poll_shim.c), loaded into this test (whose
// executable is named perf_*, as the fix requires) and called through
// dlsym: a hung-up descriptor perf is done with (events 0) no longer ends
// every poll at once; a live one still does. And the rule for loading it
// into perf, which runs as root.
#include "processor/recorder/perf_poll_fix.h"

#include <dlfcn.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/temp_dir_for_test.h"

namespace pageblame::recorder {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;
using PollFn = int (*)(struct pollfd*, nfds_t, int);

std::string Shim() { return std::string(PAGEBLAME_BINARY_DIR) + "/lib/" + PerfPollFix::kFileName; }

TEST(PerfPollFixTest, AHungUpDescriptorPerfDroppedNoLongerWakesIt) {
  void* lib = ::dlopen(Shim().c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << ::dlerror();
  auto fixed_poll = reinterpret_cast<PollFn>(::dlsym(lib, "poll"));
  ASSERT_NE(fixed_poll, nullptr);
  int hung[2], live[2];
  ASSERT_EQ(::pipe(hung), 0);
  ASSERT_EQ(::pipe(live), 0);
  ::close(hung[1]);  // the read end now reports POLLHUP, whatever is asked
  struct pollfd fds[2] = {{hung[0], 0, 0}, {live[0], POLLIN, 0}};
  // What perf 6.1 saw: the dropped entry ends the wait at once.
  EXPECT_EQ(::poll(fds, 2, 1000), 1);
  EXPECT_EQ(fds[0].revents, POLLHUP);
  // Through the fix: it waits for the live descriptor.
  const Clock::time_point start = Clock::now();
  EXPECT_EQ(fixed_poll(fds, 2, 200), 0);
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(190));
  EXPECT_EQ(fds[0].fd, hung[0]);  // given back as it was
  EXPECT_EQ(fds[0].revents, 0);
  ASSERT_EQ(::write(live[1], "x", 1), 1);
  EXPECT_EQ(fixed_poll(fds, 2, 1000), 1);
  EXPECT_EQ(fds[1].revents, POLLIN);
  // An entry that asks for something still gets its hang-up.
  fds[0].events = POLLIN;
  EXPECT_EQ(fixed_poll(fds, 2, 1000), 2);
  EXPECT_NE(fds[0].revents & POLLHUP, 0);
  for (int fd : {hung[0], live[0], live[1]}) ::close(fd);
  ::dlclose(lib);
}

TEST(PerfPollFixTest, LoadedOnlyWhenNobodyElseCanHaveWrittenIt) {
  EXPECT_TRUE(PerfPollFix::Check(Shim()).ok()) << PerfPollFix::Check(Shim());
  TempDir dir("pb_perf_poll");
  const std::string lib = dir.path() + "/" + PerfPollFix::kFileName;
  std::ofstream(lib) << "code";
  ::chmod(lib.c_str(), 0644);
  ::chmod(dir.path().c_str(), 0755);
  EXPECT_TRUE(PerfPollFix::Check(lib).ok());
  ::chmod(lib.c_str(), 0666);
  EXPECT_THAT(PerfPollFix::Check(lib).message(), HasSubstr("others may write it"));
  ::chmod(lib.c_str(), 0644);
  ::chmod(dir.path().c_str(), 0777);
  EXPECT_THAT(PerfPollFix::Check(lib).message(), HasSubstr("others may write this directory"));
  ::chmod(dir.path().c_str(), 0755);
  EXPECT_TRUE(absl::IsNotFound(PerfPollFix::Check(dir.path() + "/none.so")));
}

TEST(PerfPollFixTest, FoundInAProcessesMaps) {
  const std::string maps =
      "7f1c2a000000-7f1c2a001000 r--p 00000000 fe:00 131 /build/lib/pageblame-perf-poll.so\n"
      "7f1c2b000000-7f1c2b001000 r--p 00000000 fe:00 132 /usr/lib/x86_64-linux-gnu/libc.so.6\n";
  EXPECT_TRUE(PerfPollFix::Maps(maps, "/build/lib/pageblame-perf-poll.so"));
  EXPECT_FALSE(PerfPollFix::Maps(maps, "/other/lib/pageblame-perf-poll.so"));
  EXPECT_FALSE(PerfPollFix::Maps("", "/build/lib/pageblame-perf-poll.so"));
}

}  // namespace
}  // namespace pageblame::recorder

// DirWatch with a real directory: a rename into it (perf's cut) and Wake()
// end a wait at once; nothing ends it at its timeout.
#include "processor/recorder/dir_watch.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "processor/base/temp_dir_for_test.h"

namespace pageblame::recorder {
namespace {

double SecondsOf(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class DirWatchTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_fd_ = ::open(dir_.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); }
  void TearDown() override { ::close(dir_fd_); }
  std::string At(const std::string& name) const { return dir_.path() + "/" + name; }

  TempDir dir_{"pb_dir_watch"};
  int dir_fd_ = -1;
};

TEST_F(DirWatchTest, ARenameIntoTheDirectoryEndsTheWait) {
  DirWatch watch(dir_fd_);
  ASSERT_TRUE(watch.watching());
  std::ofstream(At("t.data")) << "chunk";
  // Made before the wait, as perf's cut can come between a listing and it.
  ASSERT_EQ(std::rename(At("t.data").c_str(), At("t.data.2026112901450277").c_str()), 0);
  EXPECT_LT(SecondsOf([&] { watch.Wait(20000); }), 10.0);
  // Seen once: the next wait runs to its timeout.
  EXPECT_GE(SecondsOf([&] { watch.Wait(200); }), 0.15);
}

TEST_F(DirWatchTest, WakeEndsTheWaitFromAnotherThread) {
  DirWatch watch(dir_fd_);
  std::thread waker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    watch.Wake();
  });
  EXPECT_LT(SecondsOf([&] { watch.Wait(20000); }), 10.0);
  waker.join();
  watch.Wake();  // before the wait: it ends at once
  EXPECT_LT(SecondsOf([&] { watch.Wait(20000); }), 10.0);
}

TEST_F(DirWatchTest, AFileWrittenInPlaceDoesNotEndTheWait) {
  DirWatch watch(dir_fd_);
  std::ofstream(At("t.data")) << "perf writing its open chunk";
  EXPECT_GE(SecondsOf([&] { watch.Wait(200); }), 0.15);
}

}  // namespace
}  // namespace pageblame::recorder

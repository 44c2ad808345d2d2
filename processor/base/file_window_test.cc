#include "processor/base/file_window.h"

#include <unistd.h>

#include <random>
#include <string>

#include "gtest/gtest.h"
#include "processor/base/temp_file_for_test.h"

namespace pageblame {
namespace {

std::string RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string out(n, '\0');
  for (char& b : out) b = static_cast<char>(rng());
  return out;
}

TEST(FileWindowTest, RecordsOfAnySizeReadFrontToBackMatchTheFile) {
  // Records of random sizes, so that many straddle a window's end and some
  // are as long as the window itself.
  const std::string bytes = RandomBytes(300000, 1);
  TempFile f(bytes);
  auto file = MappedFile::Open(f.path());
  ASSERT_TRUE(file.ok()) << file.status();
  const uint64_t begin = 100, end = bytes.size() - 50;  // a section inside the file
  constexpr size_t kWindow = 4096;
  FileWindow w(file->get(), begin, end, kWindow);
  std::mt19937_64 rng(2);
  uint64_t pos = begin;
  size_t records = 0;
  while (pos < end) {
    size_t n = std::min<uint64_t>(end - pos, 1 + rng() % kWindow);
    auto p = w.At(pos, n);
    ASSERT_TRUE(p.ok()) << p.status();
    ASSERT_EQ(std::string(reinterpret_cast<const char*>(*p), n),
              std::string(bytes, pos, n))
        << "record at " << pos;
    pos += n;
    ++records;
  }
  EXPECT_GT(records, 100u);
  // Going back is allowed (it re-reads).
  auto again = w.At(begin, 16);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(*again), 16),
            std::string(bytes, begin, 16));
}

TEST(FileWindowTest, ReadsOutsideTheSectionOrOverTheWindowAreErrorsNotOverruns) {
  const std::string bytes = RandomBytes(10000, 3);
  TempFile f(bytes);
  auto file = MappedFile::Open(f.path());
  ASSERT_TRUE(file.ok());
  FileWindow w(file->get(), 1000, 9000, 4096);
  EXPECT_FALSE(w.At(999, 8).ok());          // before the section
  EXPECT_FALSE(w.At(8995, 8).ok());         // runs past its end
  EXPECT_FALSE(w.At(2000, 4097).ok());      // longer than the window
  EXPECT_TRUE(w.At(8992, 8).ok());          // the last 8 bytes
}

TEST(FileWindowTest, AFileThatShrinksWhileBeingReadIsADataLossErrorNamingIt) {
  // Far longer than the window, so the part asked for last is read after
  // the cut.
  const std::string bytes = RandomBytes(2 << 20, 4);
  TempFile f(bytes);
  auto file = MappedFile::Open(f.path());
  ASSERT_TRUE(file.ok());
  FileWindow w(file->get(), 0, bytes.size(), 4096);
  ASSERT_TRUE(w.At(0, 100).ok());
  ASSERT_EQ(::truncate(f.path().c_str(), 20000), 0);  // cut while we read
  auto past = w.At(1500000, 100);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(past.status().message().find(f.path()), std::string::npos) << past.status();
  EXPECT_NE(past.status().message().find("shrink"), std::string::npos) << past.status();
}

TEST(FileWindowTest, SkippingAheadAndComingBackReadTheRightBytes) {
  // perf's own records can be followed by a payload that is skipped; the
  // parser may also look back. Jumps of every size, forward and back.
  const std::string bytes = RandomBytes(1 << 20, 5);
  TempFile f(bytes);
  auto file = MappedFile::Open(f.path());
  ASSERT_TRUE(file.ok());
  constexpr size_t kWindow = 4096;
  FileWindow w(file->get(), 10, bytes.size(), kWindow);
  std::mt19937_64 rng(6);
  uint64_t pos = 10;
  for (int i = 0; i < 2000; ++i) {
    const uint64_t r = rng() % 100;
    if (r < 5) {
      pos = 10 + rng() % (bytes.size() - 10 - kWindow);  // anywhere, back or ahead
    } else if (r < 15) {
      pos += rng() % (40 * kWindow);  // past what was read ahead
    } else {
      pos += rng() % 300;
    }
    if (pos + kWindow > bytes.size()) pos = 10 + rng() % 1000;
    const size_t n = 1 + rng() % kWindow;
    auto p = w.At(pos, n);
    ASSERT_TRUE(p.ok()) << p.status();
    ASSERT_EQ(std::string(reinterpret_cast<const char*>(*p), n), std::string(bytes, pos, n))
        << "step " << i << ": " << n << " bytes at " << pos;
  }
}

}  // namespace
}  // namespace pageblame

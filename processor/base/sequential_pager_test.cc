#include "processor/base/sequential_pager.h"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "processor/base/mapped_file.h"

namespace pageblame {
namespace {

// Resident KiB of the mapping that starts at `addr`, from /proc/self/smaps.
long RssKbOf(const void* addr) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in = false;
  char want[32];
  std::snprintf(want, sizeof want, "%lx-", reinterpret_cast<unsigned long>(addr));
  while (std::getline(smaps, line)) {
    if (line.find('-') != std::string::npos && line.find(' ') > line.find('-') &&
        std::isxdigit(static_cast<unsigned char>(line[0]))) {
      in = line.rfind(want, 0) == 0;
    } else if (in && line.rfind("Rss:", 0) == 0) {
      return std::stol(line.substr(4));
    }
  }
  return -1;
}

TEST(SequentialPagerTest, ReaderSeesTheFileAndResidencyStaysBounded) {
  const size_t kSize = 12 * SequentialPager::kStep + 12345;
  std::string path = ::testing::TempDir() + "/pager_test.bin";
  {
    std::vector<uint8_t> data(kSize);
    for (size_t i = 0; i < kSize; ++i) data[i] = static_cast<uint8_t>(i * 7 + (i >> 12));
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(data.data()), kSize);
  }
  auto file = MappedFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  const uint8_t* base = (*file)->bytes().data();
  long peak_kb = 0;
  {
    // Records are not page-aligned: neither are the data section's start
    // nor the positions the reader reports.
    SequentialPager pager(file->get(), 100, kSize);
    for (size_t pos = 100; pos < kSize; pos += 4096 + 24) {
      pager.Advance(pos);
      // Every byte reads back as written, whatever the pager did around it.
      for (size_t i = pos; i < std::min(kSize, pos + 4096 + 24); i += 511) {
        ASSERT_EQ(base[i], static_cast<uint8_t>(i * 7 + (i >> 12))) << "offset " << i;
      }
      if (pos % SequentialPager::kStep < 4096 + 24) {
        pager.WaitIdle();  // measure what the pager left, not how fast it runs
        peak_kb = std::max(peak_kb, RssKbOf(base));
      }
    }
    pager.Advance(kSize);
    pager.WaitIdle();
    // At the end everything is given back but the last, partial page.
    EXPECT_LE(RssKbOf(base), 8) << "pages behind the reader were not given back";
  }
  ASSERT_GE(peak_kb, 0) << "mapping not found in /proc/self/smaps";
  // Never the whole file: what is ahead (kAhead) plus the step the reader is in.
  EXPECT_LE(peak_kb * 1024, static_cast<long>(SequentialPager::kAhead + 2 * SequentialPager::kStep));
  EXPECT_GE(peak_kb * 1024, static_cast<long>(SequentialPager::kAhead / 2)) << "nothing mapped ahead";
  std::remove(path.c_str());
}

}  // namespace
}  // namespace pageblame

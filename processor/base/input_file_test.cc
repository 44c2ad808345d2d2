// InputFile refuses what cannot be read as a file of its kind, before it
// reads: directories, FIFOs and devices where a regular file is needed,
// endless streams past the limit; and never waits on a FIFO with no writer.
#include "processor/base/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/temp_dir_for_test.h"

namespace pageblame {
namespace {

using ::testing::HasSubstr;
using Accept = InputFile::Accept;

TEST(InputFileTest, ReadsARegularFileWholeAndInPieces) {
  TempDir dir;
  const std::string path = dir.path() + "/t.txt";
  std::ofstream(path) << "0x1000 0x2000\n";
  auto f = InputFile::Open(path, "region table", Accept::kRegular);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE((*f)->is_regular());
  EXPECT_EQ((*f)->size(), 14u);
  EXPECT_EQ(*(*f)->ReadAt(2, 4), "1000");
  EXPECT_EQ(*(*f)->ReadAll(), "0x1000 0x2000\n");
}

TEST(InputFileTest, ADirectoryIsNamedAsOne) {
  TempDir dir;
  for (Accept a : {Accept::kRegular, Accept::kRegularOrStream}) {
    auto f = InputFile::Open(dir.path(), "perf map", a);
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.status().message(), dir.path() + ": is a directory, not a perf map");
  }
}

TEST(InputFileTest, AMissingFileIsNotFound) {
  auto f = InputFile::Open("/nonexistent/perf-1.map", "perf map", Accept::kRegular);
  EXPECT_TRUE(absl::IsNotFound(f.status())) << f.status();
}

// A FIFO nobody writes: refused where a regular file is needed, read as
// empty where streams are taken; neither waits.
TEST(InputFileTest, AFifoNeverHangs) {
  TempDir dir;
  const std::string fifo = dir.path() + "/perf-1.map";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto side = InputFile::Open(fifo, "perf map", Accept::kRegular);
  ASSERT_FALSE(side.ok());
  EXPECT_THAT(side.status().message(), HasSubstr("is a FIFO, not a regular file"));
  auto text = InputFile::ReadWhole(fifo, "region table", Accept::kRegularOrStream);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "");
}

TEST(InputFileTest, ADeviceIsRefusedAsASideFile) {
  auto f = InputFile::Open("/dev/null", "ELF file", Accept::kRegular);
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.status().message(), HasSubstr("/dev/null: is a character device, not a regular file"));
}

TEST(InputFileTest, AnEndlessStreamStopsAtTheLimit) {
  auto text = InputFile::ReadWhole("/dev/zero", "region table", Accept::kRegularOrStream);
  ASSERT_FALSE(text.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(text.status())) << text.status();
  EXPECT_THAT(text.status().message(), HasSubstr("/dev/zero: more than 256 MiB"));
  EXPECT_THAT(text.status().message(), HasSubstr("endless stream"));
}

TEST(InputFileTest, ALargerRegularFileIsRefusedBeforeItIsRead) {
  TempDir dir;
  const std::string path = dir.path() + "/huge.txt";
  // Sparse: the size is past the limit, no block is written.
  ASSERT_EQ(::truncate((std::ofstream(path), path).c_str(), InputFile::kTextLimit + 1), 0);
  auto text = InputFile::ReadWhole(path, "list of addresses", Accept::kRegularOrStream);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().message(),
            path + ": more than 1024 MiB, the most pageblame reads of a text input (this list of addresses)");
}

TEST(InputFileTest, ReleaseHandsTheDescriptorOver) {
  auto f = InputFile::Open("/proc/self/status", "file", Accept::kRegular);
  ASSERT_TRUE(f.ok()) << f.status();
  const int fd = (*f)->Release();
  f->reset();
  EXPECT_EQ(::fcntl(fd, F_GETFD) >= 0, true);  // still open
  ::close(fd);
}

}  // namespace
}  // namespace pageblame

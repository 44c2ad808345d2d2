// ChunkStore against what another user could plant among perf's chunks:
// a link, a hard link, a file of someone else's; and its disk count.
#include "processor/recorder/chunk_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/temp_dir_for_test.h"

namespace pageblame::recorder {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

void WriteFile(const std::string& path, size_t bytes) { std::ofstream(path) << std::string(bytes, 'x'); }

class ChunkStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_fd_ = ::open(dir_.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); }
  void TearDown() override { ::close(dir_fd_); }
  std::string At(const std::string& name) const { return dir_.path() + "/" + name; }
  ChunkStore Store() const { return ChunkStore(dir_fd_, "t.data", At("t.data")); }

  TempDir dir_{"pb_chunk_store"};
  int dir_fd_ = -1;
};

TEST_F(ChunkStoreTest, ClosedListsTheChunksInTimeOrder) {
  WriteFile(At("t.data"), 10);  // perf's open chunk
  WriteFile(At("t.data.2026112901450277"), 10);
  WriteFile(At("t.data.2026112901450234"), 10);
  WriteFile(At("t.data.index"), 10);
  WriteFile(At("u.data.2026112901450200"), 10);
  EXPECT_THAT(Store().Closed(), ElementsAre("t.data.2026112901450234", "t.data.2026112901450277"));
}

TEST_F(ChunkStoreTest, OnlyAPlainFileOfOursWithOneLinkIsOpened) {
  const std::string victim = At("victim");
  WriteFile(victim, 10);
  ASSERT_EQ(::symlink(victim.c_str(), At("t.data.2026112901450201").c_str()), 0);
  ASSERT_EQ(::link(victim.c_str(), At("t.data.2026112901450202").c_str()), 0);
  WriteFile(At("t.data.2026112901450203"), 10);
  ASSERT_EQ(::mkdir(At("t.data.2026112901450204").c_str(), 0700), 0);
  const ChunkStore store = Store();
  EXPECT_FALSE(store.Open("t.data.2026112901450201").ok());  // O_NOFOLLOW
  absl::StatusOr<int> hard = store.Open("t.data.2026112901450202");
  ASSERT_FALSE(hard.ok());
  EXPECT_THAT(std::string(hard.status().message()), HasSubstr("2 links"));
  absl::StatusOr<int> dir = store.Open("t.data.2026112901450204");
  ASSERT_FALSE(dir.ok());
  EXPECT_THAT(std::string(dir.status().message()), HasSubstr("not a regular file"));
  absl::StatusOr<int> good = store.Open("t.data.2026112901450203");
  ASSERT_TRUE(good.ok()) << good.status();
  ::close(*good);
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(At("t.data.2026112901450203").c_str(), 65534, 65534), 0);
    absl::StatusOr<int> theirs = store.Open("t.data.2026112901450203");
    ASSERT_FALSE(theirs.ok());
    EXPECT_THAT(std::string(theirs.status().message()), HasSubstr("owned by uid 65534"));
  }
}

TEST_F(ChunkStoreTest, RemoveTakesOnlyChunks) {
  WriteFile(At("t.data.2026112901450201"), 10);
  WriteFile(At("t.data.index"), 10);
  EXPECT_TRUE(Store().Remove("t.data.2026112901450201").ok());
  EXPECT_FALSE(Store().Remove("t.data.index").ok());
  EXPECT_FALSE(Store().Remove("../t.data.2026112901450201").ok());
  EXPECT_TRUE(Store().Closed().empty());
  EXPECT_EQ(::access(At("t.data.index").c_str(), F_OK), 0);
}

TEST_F(ChunkStoreTest, DiskBytesCountsTheRecordingNotAnOlderOne) {
  WriteFile(At("t.data"), 8192);
  WriteFile(At("t.data.2026112901450201"), 8192);
  WriteFile(At("t.data.rss"), 8192);
  ASSERT_EQ(::mkdir(At("t.data.runtime").c_str(), 0700), 0);
  WriteFile(At("t.data.runtime/1-2.txt"), 8192);
  const uint64_t four = Store().DiskBytes();
  EXPECT_GE(four, 4u * 8192);
  WriteFile(At("t.data.old"), 1 << 20);
  WriteFile(At("t.data.old.rss"), 1 << 20);
  WriteFile(At("other"), 1 << 20);
  EXPECT_EQ(Store().DiskBytes(), four);
  ASSERT_TRUE(Store().WriteIndex(std::string(8192, 'i')).ok());
  EXPECT_GE(Store().DiskBytes(), four + 8192);
  struct stat st;
  ASSERT_EQ(::stat(At("t.data.index").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

// A checkpoint replaces the index by rename: a TRACE.index.new a kill left
// (whole, partial, or a link someone planted at the name) is removed first,
// never written through, and what is at TRACE.index is always a whole file.
TEST_F(ChunkStoreTest, WriteIndexGoesThroughAFreshTempFileAndRename) {
  ASSERT_TRUE(Store().WriteIndex("first").ok());
  WriteFile(At("t.data.index.new"), 3);  // a checkpoint a kill cut short
  const std::string victim = At("victim");
  WriteFile(victim, 10);
  ASSERT_TRUE(Store().WriteIndex("second").ok());
  EXPECT_NE(::access(At("t.data.index.new").c_str(), F_OK), 0);
  ASSERT_EQ(::symlink(victim.c_str(), At("t.data.index.new").c_str()), 0);
  ASSERT_TRUE(Store().WriteIndex("third").ok());
  std::ifstream v(victim), i(At("t.data.index"));
  std::string vs, is;
  std::getline(v, vs);
  std::getline(i, is);
  EXPECT_EQ(vs, std::string(10, 'x'));  // not written through the link
  EXPECT_EQ(is, "third");
  struct stat st;
  ASSERT_EQ(::lstat(At("t.data.index").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_NE(::lstat(At("t.data.index.new").c_str(), &st), 0);
}

// The index written a piece at a time (the folder's checkpoints): patched
// in place, committed whole; a try past its limit takes at most the limit
// on disk while it runs, counts on, and is dropped: the old index stays and
// no temporary file is left.
TEST_F(ChunkStoreTest, AnIndexFileIsWrittenInPiecesAndOneOverItsLimitIsDropped) {
  ASSERT_TRUE(Store().WriteIndex("old").ok());
  {
    absl::StatusOr<std::unique_ptr<ChunkStore::IndexFile>> f = Store().NewIndex(8);
    ASSERT_TRUE(f.ok()) << f.status();
    (*f)->Append("12345");
    (*f)->Append("678");
    (*f)->Overwrite(1, "ab");
    (*f)->Append("9");  // past the limit: counted, not written
    EXPECT_TRUE((*f)->overflowed());
    EXPECT_EQ((*f)->written(), 9u);
    struct stat st;
    ASSERT_EQ(::stat(At("t.data.index.new").c_str(), &st), 0);
    EXPECT_EQ(st.st_size, 8);
    EXPECT_FALSE((*f)->Commit().ok());
  }
  EXPECT_NE(::access(At("t.data.index.new").c_str(), F_OK), 0);
  std::string is;
  std::getline(std::ifstream(At("t.data.index")), is);
  EXPECT_EQ(is, "old");
  absl::StatusOr<std::unique_ptr<ChunkStore::IndexFile>> f = Store().NewIndex(8);
  ASSERT_TRUE(f.ok()) << f.status();
  (*f)->Append("12345");
  (*f)->Append("678");
  (*f)->Overwrite(1, "ab");
  EXPECT_FALSE((*f)->overflowed());
  ASSERT_TRUE((*f)->Commit().ok());
  std::getline(std::ifstream(At("t.data.index")), is);
  EXPECT_EQ(is, "1ab45678");
  EXPECT_NE(::access(At("t.data.index.new").c_str(), F_OK), 0);
}

}  // namespace
}  // namespace pageblame::recorder

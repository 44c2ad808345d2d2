// RecordingFiles against what another local user can plant where root
// records: links at the trace's and side files' names, files squatted after
// the recording began, a directory anyone can write. The victim is a file of
// this test's that no link may lead the recorder to change.
#include "processor/recorder/recording_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/temp_dir_for_test.h"
#include "processor/recorder/runtime_file_copy.h"
#include "processor/symbols/test_util.h"

namespace pageblame::recorder {
namespace {

using ::testing::HasSubstr;

void WriteFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}
bool IsLink(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}
mode_t ModeOf(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0;
}

class RecordingFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    victim_ = victim_dir_.path() + "/secret";
    WriteFile(victim_, "root's own");
    ::chmod(victim_.c_str(), 0600);
  }
  std::string Path(const std::string& name) const { return dir_.path() + "/" + name; }
  std::unique_ptr<RecordingFiles> Prepare(bool force = false) {
    absl::StatusOr<std::unique_ptr<RecordingFiles>> f = RecordingFiles::Prepare(Path("t.data"), force);
    EXPECT_TRUE(f.ok()) << f.status();
    return f.ok() ? *std::move(f) : nullptr;
  }
  void ExpectVictimUntouched() const { EXPECT_EQ(ReadFile(victim_), "root's own"); }

  TempDir dir_{"pb_recording_files"};
  TempDir victim_dir_{"pb_victim"};
  std::string victim_;
};

TEST_F(RecordingFilesTest, MakesTheTraceNewAndPrivateAndGivesPerfItsPath) {
  std::unique_ptr<RecordingFiles> f = Prepare();
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(Exists(Path("t.data")));
  EXPECT_EQ(ModeOf(Path("t.data")), 0600u);
  // A directory of our own under /tmp (sticky, root's): nobody else can
  // swap the name under perf.
  EXPECT_EQ(f->perf_output(), Path("t.data"));
  EXPECT_EQ(f->perf_fd(), -1);
  EXPECT_FALSE(f->set_aside().moved);
}

// perf's rule: a non-empty trace becomes TRACE.old; its side files go with
// it, and an older TRACE.old's go.
TEST_F(RecordingFilesTest, TheOldRecordingMovesWhole) {
  WriteFile(Path("t.data"), "old trace");
  WriteFile(Path("t.data.rss"), "old snapshots");
  WriteFile(Path("t.data.old"), "older trace");
  WriteFile(Path("t.data.old.rss"), "older snapshots");
  WriteFile(Path("t.data.attach-maps"), "old maps");
  WriteFile(Path("t.data.heap"), "old heap snapshots");
  WriteFile(Path("t.data.old.heap"), "older heap snapshots");
  WriteFile(Path("t.data.old.attach-maps"), "older maps");
  ASSERT_EQ(::mkdir(Path("t.data.runtime").c_str(), 0700), 0);
  WriteFile(Path("t.data.runtime/42-1000.txt"), "old table");
  ASSERT_EQ(::mkdir(Path("t.data.old.runtime").c_str(), 0700), 0);
  WriteFile(Path("t.data.old.runtime/42-5.txt"), "older table");
  WriteFile(Path("t.data.old.runtime/jit-42.dump"), "older jitdump");  // copies record made
  WriteFile(Path("t.data.old.runtime/perf-42.map"), "older perf map");
  std::unique_ptr<RecordingFiles> f = Prepare();
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->set_aside().moved && f->set_aside().replaced_old && f->set_aside().rss && f->set_aside().runtime);
  EXPECT_TRUE(f->set_aside().attach_maps);
  EXPECT_TRUE(f->set_aside().heap);
  EXPECT_EQ(ReadFile(Path("t.data.old.attach-maps")), "old maps");
  EXPECT_EQ(ReadFile(Path("t.data.old.heap")), "old heap snapshots");
  EXPECT_FALSE(Exists(Path("t.data.heap")));
  EXPECT_FALSE(Exists(Path("t.data.attach-maps")));
  EXPECT_FALSE(Exists(Path("t.data.old.runtime/jit-42.dump")));
  EXPECT_EQ(ReadFile(Path("t.data.old")), "old trace");
  EXPECT_EQ(ReadFile(Path("t.data.old.rss")), "old snapshots");
  EXPECT_EQ(ReadFile(Path("t.data.old.runtime/42-1000.txt")), "old table");
  EXPECT_FALSE(Exists(Path("t.data.old.runtime/42-5.txt")));
  EXPECT_FALSE(Exists(Path("t.data.rss")));
  EXPECT_FALSE(Exists(Path("t.data.runtime")));
  EXPECT_EQ(ReadFile(Path("t.data")), "");
}

// No trace there: side files at its names belong to no trace and go.
TEST_F(RecordingFilesTest, OrphanSideFilesGo) {
  WriteFile(Path("t.data.rss"), "orphan");
  ASSERT_EQ(::mkdir(Path("t.data.runtime").c_str(), 0700), 0);
  WriteFile(Path("t.data.runtime/42-1000.txt"), "orphan table");
  std::unique_ptr<RecordingFiles> f = Prepare();
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(Exists(Path("t.data.rss")));
  EXPECT_FALSE(Exists(Path("t.data.runtime")));
}

// The attack of issue 44: links planted at the snapshot file's and the
// runtime tables' names, and at the trace's name (dangling: perf would
// create the file it names). None is followed.
TEST_F(RecordingFilesTest, PlantedLinksAreNeverFollowed) {
  ASSERT_EQ(::symlink(victim_.c_str(), Path("t.data.rss").c_str()), 0);
  ASSERT_EQ(::symlink(victim_dir_.path().c_str(), Path("t.data.runtime").c_str()), 0);
  const std::string made_by_perf = victim_dir_.path() + "/made";
  ASSERT_EQ(::symlink(made_by_perf.c_str(), Path("t.data").c_str()), 0);
  WriteFile(victim_dir_.path() + "/42-1000.txt", "a table-like file of root's");
  std::unique_ptr<RecordingFiles> f = Prepare();
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->set_aside().was_link);
  EXPECT_TRUE(IsLink(Path("t.data.old")));  // moved aside, never followed
  EXPECT_FALSE(Exists(made_by_perf));
  EXPECT_FALSE(IsLink(Path("t.data")));
  absl::StatusOr<int> rss = f->CreateSnapshotFile();
  ASSERT_TRUE(rss.ok()) << rss.status();
  ASSERT_EQ(::write(*rss, "x", 1), 1);
  ::close(*rss);
  ASSERT_TRUE(f->WriteRuntimeTable("42-2000.txt", "table").ok());
  EXPECT_EQ(ModeOf(Path("t.data.runtime")), 0700u);
  EXPECT_EQ(ReadFile(Path("t.data.runtime/42-2000.txt")), "table");
  ExpectVictimUntouched();
  EXPECT_EQ(ReadFile(victim_dir_.path() + "/42-1000.txt"), "a table-like file of root's");
  EXPECT_FALSE(Exists(victim_dir_.path() + "/42-2000.txt"));
}

// Names squatted after the recording began are not the recording's: never
// written into.
TEST_F(RecordingFilesTest, NamesTakenAfterTheStartAreRefused) {
  std::unique_ptr<RecordingFiles> f = Prepare();
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(::symlink(victim_.c_str(), Path("t.data.rss").c_str()), 0);
  ASSERT_EQ(::symlink(victim_dir_.path().c_str(), Path("t.data.runtime").c_str()), 0);
  ASSERT_EQ(::symlink(victim_.c_str(), Path("t.data.heap").c_str()), 0);
  absl::StatusOr<int> rss = f->CreateSnapshotFile();
  EXPECT_THAT(rss.status().message(), HasSubstr("t.data.rss appeared after the recording began"));
  absl::StatusOr<int> heap = f->CreateHeapSnapshotFile();
  EXPECT_THAT(heap.status().message(), HasSubstr("t.data.heap appeared after the recording began"));
  absl::Status table = f->WriteRuntimeTable("42-2000.txt", "table");
  EXPECT_THAT(table.message(), HasSubstr("t.data.runtime appeared after the recording began"));
  ExpectVictimUntouched();
  EXPECT_FALSE(Exists(victim_dir_.path() + "/42-2000.txt"));
}

TEST_F(RecordingFilesTest, ADirectoryOthersMayWriteNeedsForce) {
  ASSERT_EQ(::chmod(dir_.path().c_str(), 01777), 0);
  absl::StatusOr<std::unique_ptr<RecordingFiles>> refused = RecordingFiles::Prepare(Path("t.data"), false);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.status().message(), HasSubstr("is writable by anyone (mode 1777)"));
  EXPECT_THAT(refused.status().message(), HasSubstr("--force"));
  EXPECT_FALSE(Exists(Path("t.data")));
  // Forced: made all the same, and perf writes through the descriptor, as
  // the name could be swapped under it.
  std::unique_ptr<RecordingFiles> f = Prepare(/*force=*/true);
  ASSERT_NE(f, nullptr);
  EXPECT_GE(f->perf_fd(), 0);
  EXPECT_EQ(f->perf_output(), "/proc/self/fd/" + std::to_string(f->perf_fd()));
  ASSERT_EQ(::chmod(dir_.path().c_str(), 0770), 0);
  EXPECT_THAT(RecordingFiles::Prepare(Path("u.data"), false).status().message(),
              HasSubstr("is writable by its group (mode 0770)"));
}

// A directory of another user's (root recording into a developer's home):
// files are made there, and perf is given the descriptor.
TEST_F(RecordingFilesTest, AnotherUsersDirectoryGetsTheDescriptor) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the directory away";
  ASSERT_EQ(::chown(dir_.path().c_str(), 65534, 65534), 0);
  std::unique_ptr<RecordingFiles> f = Prepare();
  ASSERT_NE(f, nullptr);
  EXPECT_GE(f->perf_fd(), 0);
}

TEST_F(RecordingFilesTest, WhatIsNoTraceIsRefused) {
  ASSERT_EQ(::mkdir(Path("t.data").c_str(), 0700), 0);
  EXPECT_THAT(RecordingFiles::Prepare(Path("t.data"), false).status().message(),
              HasSubstr("t.data is a directory, not a trace"));
  EXPECT_FALSE(RecordingFiles::Prepare("-", false).ok());
  ASSERT_EQ(::mkdir(Path("u.data.runtime").c_str(), 0700), 0);
  WriteFile(Path("u.data.runtime/notes.txt"), "the user's");
  EXPECT_THAT(RecordingFiles::Prepare(Path("u.data"), false).status().message(),
              HasSubstr("holds files that record did not make there"));
  EXPECT_EQ(ReadFile(Path("u.data.runtime/notes.txt")), "the user's");
}

// The side files record writes once perf records: made new, never over
// a file someone put there meanwhile.
TEST_F(RecordingFilesTest, TheTableAtTheAttachIsMadeNew) {
  std::unique_ptr<RecordingFiles> f = Prepare();
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(f->PerfWroteHeader());
  WriteFile(Path("t.data"), "PERFILE2");
  EXPECT_TRUE(f->PerfWroteHeader());
  ASSERT_TRUE(f->WriteAttachMaps("the table").ok());
  EXPECT_EQ(f->AttachMapsPath(), Path("t.data.attach-maps"));
  EXPECT_EQ(ReadFile(Path("t.data.attach-maps")), "the table");
  EXPECT_EQ(ModeOf(Path("t.data.attach-maps")), 0600u);
  EXPECT_THAT(f->WriteAttachMaps("again").message(), HasSubstr("appeared after the recording began"));
  ASSERT_TRUE(f->WriteRuntimeTable("jit-42.dump", "whole records").ok());
  EXPECT_EQ(ReadFile(Path("t.data.runtime/jit-42.dump")), "whole records");
  EXPECT_TRUE(RecordingFiles::IsRuntimeDirFile("jit-42.dump"));
  EXPECT_TRUE(RecordingFiles::IsRuntimeDirFile("perf-42.map"));
  EXPECT_TRUE(RecordingFiles::IsRuntimeDirFile("42-1000.txt"));
  EXPECT_FALSE(RecordingFiles::IsRuntimeDirFile("jit-x.dump"));
  EXPECT_FALSE(RecordingFiles::IsRuntimeDirFile("notes.txt"));
}

// The runtime's perf map and jitdump at the stop, whole records only: what
// a runtime still writing them leaves cut is not copied.
TEST_F(RecordingFilesTest, TheRuntimesFilesAreKeptWhole) {
  TempDir tmp("pb_runtime_tmp");
  const std::string dump = symbols::testing::JitDumpWriter(42).Load(0x1000, 0x10, 1, "A").bytes();
  const std::string more = symbols::testing::JitDumpWriter(42).Load(0x1000, 0x10, 1, "A").Load(0x2000, 0x10, 2, "B").bytes();
  WriteFile(tmp.path() + "/jit-42.dump", more.substr(0, more.size() - 5));
  WriteFile(tmp.path() + "/perf-42.map", "1000 10 A\n2000 10 B\n3000 1");
  WriteFile(tmp.path() + "/perf-43.map", "");  // nothing whole: not copied
  std::unique_ptr<RecordingFiles> f = Prepare();
  ASSERT_NE(f, nullptr);
  RuntimeFileCopy::Result r = RuntimeFileCopy::Copy(f.get(), {42, 43, 44}, tmp.path());
  EXPECT_TRUE(r.errors.empty());
  EXPECT_THAT(r.copied, ::testing::ElementsAre(Path("t.data.runtime/perf-42.map"), Path("t.data.runtime/jit-42.dump")));
  EXPECT_EQ(ReadFile(Path("t.data.runtime/perf-42.map")), "1000 10 A\n2000 10 B\n");
  EXPECT_EQ(ReadFile(Path("t.data.runtime/jit-42.dump")), dump);
  EXPECT_EQ(ModeOf(Path("t.data.runtime/jit-42.dump")), 0600u);
  // Copied once: a second copy would find its own there.
  EXPECT_THAT(RuntimeFileCopy::Copy(f.get(), {42}, tmp.path()).errors,
              ::testing::Contains(HasSubstr("appeared after the recording began")));
}

// perf failed before writing: the empty trace made for it goes.
TEST_F(RecordingFilesTest, AnEmptyTraceIsRemoved) {
  std::unique_ptr<RecordingFiles> f = Prepare();
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->RemoveTraceIfEmpty());
  EXPECT_FALSE(Exists(Path("t.data")));
  std::unique_ptr<RecordingFiles> g = Prepare();
  WriteFile(Path("t.data"), "perf wrote");
  EXPECT_FALSE(g->RemoveTraceIfEmpty());
  EXPECT_TRUE(Exists(Path("t.data")));
}

}  // namespace
}  // namespace pageblame::recorder

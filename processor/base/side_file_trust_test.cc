// The side-file rule: in a directory anyone can write, only files owned by
// root or the user running pageblame, and writable by nobody else, are read;
// --force reads them all; other directories are the user's choice. Judged on
// the open descriptor, never again by path.
#include "processor/base/side_file_trust.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/shared_dir_for_test.h"
#include "processor/base/temp_dir_for_test.h"

namespace pageblame {
namespace {

using ::testing::HasSubstr;

#define SKIP_UNLESS_ROOT() \
  if (!IsRoot()) GTEST_SKIP() << "choosing a file's owner needs root"

TEST(SideFileTrustTest, AStickyWorldWritableDirectoryIsShared) {
  SharedDirForTest shared;
  TempDir own;
  EXPECT_TRUE(InSharedDirectory(shared.path() + "/perf-1.map"));
  EXPECT_TRUE(InSharedDirectory("/tmp/perf-1.map"));
  EXPECT_FALSE(InSharedDirectory(own.path() + "/perf-1.map"));  // mkdtemp: 0700
  EXPECT_TRUE(InSharedDirectory("/no/such/dir/perf-1.map"));   // cannot tell: shared
}

TEST(SideFileTrustTest, AnotherUsersFileInASharedDirectoryIsRefusedNamingItsOwner) {
  SKIP_UNLESS_ROOT();
  SharedDirForTest dir;
  const std::string path = dir.Write("perf-7.map", "1000 10 evil\n", kNobody, 0644);
  auto f = OpenSideFile(path, "perf map", /*force=*/false);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(f.status().message(),
            path + ": owned by nobody (uid 65534), not by root or the user running pageblame "
                   "(root (uid 0)), in a directory others can write: ignored (use -f to override)");
}

TEST(SideFileTrustTest, ForceReadsAnotherUsersFile) {
  SKIP_UNLESS_ROOT();
  SharedDirForTest dir;
  const std::string path = dir.Write("perf-7.map", "1000 10 evil\n", kNobody, 0644);
  auto f = OpenSideFile(path, "perf map", /*force=*/true);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(*(*f)->ReadAll(), "1000 10 evil\n");
}

TEST(SideFileTrustTest, ARootOwnedFileIsRead) {
  SKIP_UNLESS_ROOT();
  SharedDirForTest dir;
  const std::string path = dir.Write("perf-7.map", "1000 10 good\n", 0, 0644);
  auto f = OpenSideFile(path, "perf map", /*force=*/false);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(*(*f)->ReadAll(), "1000 10 good\n");
}

TEST(SideFileTrustTest, AFileTheGroupOrOthersMayWriteIsRefusedEvenFromRoot) {
  SKIP_UNLESS_ROOT();
  SharedDirForTest dir;
  for (mode_t mode : {0666, 0664, 0646}) {
    SCOPED_TRACE(mode);
    const std::string path = dir.Write("perf-7.map", "1000 10 f\n", 0, mode);
    auto f = OpenSideFile(path, "perf map", /*force=*/false);
    ASSERT_FALSE(f.ok());
    EXPECT_THAT(f.status().message(), HasSubstr(": writable by its group or others (mode 0"));
    EXPECT_THAT(f.status().message(), HasSubstr("owner root (uid 0)), in a directory others can write"));
    EXPECT_TRUE(OpenSideFile(path, "perf map", /*force=*/true).ok());
  }
}

TEST(SideFileTrustTest, AnOwnerWithoutANameIsNamedByUid) {
  SKIP_UNLESS_ROOT();
  SharedDirForTest dir;
  const uid_t unnamed = 4000000;  // above any Debian system or user range
  const std::string path = dir.Write("perf-7.map", "1000 10 f\n", unnamed, 0644);
  auto f = OpenSideFile(path, "perf map", /*force=*/false);
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.status().message(), HasSubstr(": owned by uid 4000000, not by root"));
}

TEST(SideFileTrustTest, OutsideASharedDirectoryAnyOwnerIsTheUsersChoice) {
  SKIP_UNLESS_ROOT();
  TempDir own;
  const std::string path = own.path() + "/perf-7.map";
  std::FILE* out = std::fopen(path.c_str(), "w");
  ASSERT_NE(out, nullptr);
  std::fputs("1000 10 f\n", out);
  std::fclose(out);
  ASSERT_EQ(::chown(path.c_str(), kNobody, kNobody), 0);
  ASSERT_EQ(::chmod(path.c_str(), 0666), 0);
  EXPECT_TRUE(OpenSideFile(path, "perf map", /*force=*/false).ok());
}

TEST(SideFileTrustTest, TheOpenDescriptorIsJudgedNotWhatThePathNamesLater) {
  SKIP_UNLESS_ROOT();
  SharedDirForTest dir;
  const std::string path = dir.Write("perf-7.map", "1000 10 good\n", 0, 0644);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  // Another user's file renamed over the name after it was opened.
  const std::string evil = dir.Write("evil.map", "1000 10 evil\n", kNobody, 0644);
  ASSERT_EQ(::rename(evil.c_str(), path.c_str()), 0);
  EXPECT_TRUE(TrustedInSharedDir(fd, path).ok());
  const int evil_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(evil_fd, 0);
  EXPECT_EQ(TrustedInSharedDir(evil_fd, path).code(), absl::StatusCode::kPermissionDenied);
  ::close(fd);
  ::close(evil_fd);
}

TEST(SideFileTrustTest, WhatCannotBeOpenedIsSaidAsInputFileSaysIt) {
  SharedDirForTest dir;
  EXPECT_EQ(OpenSideFile(dir.path() + "/none.map", "perf map", false).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_THAT(OpenSideFile(dir.path(), "perf map", false).status().message(),
              HasSubstr("is a directory, not a perf map"));
}

}  // namespace
}  // namespace pageblame

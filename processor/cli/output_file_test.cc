// OutputFile never destroys what it did not make: a failed command leaves the
// old target whole, an input is never the output, a device is written but
// never removed. Text is written with no control in it but its newlines.
// And RunGuarded turns an escaping exception into exit 1.
#include "processor/cli/output_file.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <new>
#include <sstream>
#include <stdexcept>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/temp_dir_for_test.h"
#include "processor/cli/usage.h"

namespace pageblame::cli {
namespace {

using ::testing::HasSubstr;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void Spit(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// Names in `dir` other than `keep`: temporary files left behind.
std::vector<std::string> Others(const std::string& dir, const std::string& keep) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().filename() != keep) out.push_back(e.path().filename());
  }
  return out;
}

TEST(OutputFileTest, AFailedCommandLeavesTheOldFileWhole) {
  TempDir dir;
  const std::string path = dir.path() + "/old.json";
  Spit(path, "the old answer");
  {
    auto out = OutputFile::Open(path, {});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_TRUE((*out)->Write("half of a new").ok());
    // The command fails here: no Close().
  }
  EXPECT_EQ(Slurp(path), "the old answer");
  EXPECT_THAT(Others(dir.path(), "old.json"), ::testing::IsEmpty());
}

TEST(OutputFileTest, ASuccessfulCommandReplacesTheFileKeepingItsMode) {
  TempDir dir;
  const std::string path = dir.path() + "/a.txt";
  Spit(path, "old");
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  auto out = OutputFile::Open(path, {});
  ASSERT_TRUE(out.ok()) << out.status();
  // Until it is closed, the old answer is still there.
  ASSERT_TRUE((*out)->Write("new answer").ok());
  EXPECT_EQ(Slurp(path), "old");
  ASSERT_TRUE((*out)->Close().ok());
  EXPECT_EQ(Slurp(path), "new answer");
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_THAT(Others(dir.path(), "a.txt"), ::testing::IsEmpty());
}

TEST(OutputFileTest, ANewFileGetsTheUmasksMode) {
  TempDir dir;
  const std::string path = dir.path() + "/new.txt";
  const mode_t old_mask = ::umask(022);
  auto out = OutputFile::Open(path, {});
  ::umask(old_mask);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE((*out)->Write("x").ok());
  ASSERT_TRUE((*out)->Close().ok());
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(OutputFileTest, ALinkStaysALinkAndItsTargetIsReplaced) {
  TempDir dir;
  const std::string target = dir.path() + "/target.txt", link = dir.path() + "/link.txt";
  Spit(target, "old");
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  auto out = OutputFile::Open(link, {});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE((*out)->Write("new").ok());
  ASSERT_TRUE((*out)->Close().ok());
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(Slurp(target), "new");
}

TEST(OutputFileTest, AnInputIsNeverTheOutput) {
  TempDir dir;
  const std::string trace = dir.path() + "/t.data", link = dir.path() + "/l.data";
  Spit(trace, "PERFILE2...");
  ASSERT_EQ(::symlink(trace.c_str(), link.c_str()), 0);
  for (const std::string& out_path : {trace, link, dir.path() + "/./t.data"}) {
    SCOPED_TRACE(out_path);
    auto out = OutputFile::Open(out_path, {"--pid-value-not-a-file", trace});
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(ExitCodeFor(out.status()), kExitUsage);
    EXPECT_THAT(out.status().message(), HasSubstr("is also an input"));
  }
  EXPECT_EQ(Slurp(trace), "PERFILE2...");
}

TEST(OutputFileTest, ADirectoryIsRefusedAndKept) {
  TempDir dir;
  auto out = OutputFile::Open(dir.path(), {});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(ExitCodeFor(out.status()), kExitBadInput);
  EXPECT_THAT(out.status().message(), HasSubstr("Is a directory"));
  EXPECT_TRUE(std::filesystem::is_directory(dir.path()));
}

// A device that answers every write with ENOSPC, as /dev/full does: the
// write fails, exit 1, and the device node is still there. The test makes
// its own node (as root) so that no machine's /dev/full is at stake.
TEST(OutputFileTest, AFullDeviceFailsTheWriteAndStays) {
  if (::geteuid() != 0) GTEST_SKIP() << "mknod needs root";
  TempDir dir;
  const std::string dev = dir.path() + "/full";
  ASSERT_EQ(::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 7)), 0) << std::strerror(errno);
  {
    auto out = OutputFile::Open(dev, {});
    ASSERT_TRUE(out.ok()) << out.status();
    absl::Status s = (*out)->Write(std::string(1 << 16, 'x'));
    if (s.ok()) s = (*out)->Close();
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(ExitCodeFor(s), kExitBadInput);
    EXPECT_THAT(s.message(), HasSubstr("No space left on device"));
  }
  struct stat st;
  ASSERT_EQ(::stat(dev.c_str(), &st), 0) << "the device node was removed";
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(OutputFileTest, AFifoIsWrittenDirectly) {
  TempDir dir;
  const std::string fifo = dir.path() + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // A reader first, or opening the FIFO for writing would block.
  std::FILE* reader = std::fopen(fifo.c_str(), "r+");  // r+ opens without waiting
  ASSERT_NE(reader, nullptr);
  {
    auto out = OutputFile::Open(fifo, {});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_TRUE((*out)->Write("through").ok());
    ASSERT_TRUE((*out)->Close().ok());
  }
  char got[8] = {};
  ASSERT_EQ(std::fread(got, 1, 7, reader), 7u);
  EXPECT_EQ(std::string(got), "through");
  std::fclose(reader);
  struct stat st;
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(OutputFileTest, AnUnwritableDirectoryFailsAtOpen) {
  auto out = OutputFile::Open("/nonexistent-dir/answer.txt", {});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("cannot write /nonexistent-dir/answer.txt"));
}

// The last line of defence: a control a renderer let through reaches the
// file escaped; the answer's own newlines, its UTF-8 and binary answers
// (Write) stay as they are.
TEST(OutputFileTest, TextIsWrittenWithNoControlButItsNewlines) {
  TempDir dir;
  const std::string text = dir.path() + "/a.txt", binary = dir.path() + "/a.pb";
  for (const std::string& path : {text, binary}) {
    auto out = OutputFile::Open(path, {});
    ASSERT_TRUE(out.ok()) << out.status();
    const std::string answer = "pid 1 (\xc3\x9c)\n  #0 \x1b[2J\r\xc2\x9b\n";
    ASSERT_TRUE((path == text ? (*out)->WriteText(answer) : (*out)->Write(answer)).ok());
    ASSERT_TRUE((*out)->Close().ok());
  }
  EXPECT_EQ(Slurp(text), "pid 1 (\xc3\x9c)\n  #0 \\x1b[2J\\x0d\\u009b\n");
  EXPECT_EQ(Slurp(binary), "pid 1 (\xc3\x9c)\n  #0 \x1b[2J\r\xc2\x9b\n");
}

// A text made a piece at a time (growth --detail) is written as the whole
// would be, wherever the pieces are cut: inside a line, inside a UTF-8
// character (judged whole, not as two bad bytes), after a control; the last
// line, with no newline, at Close().
TEST(OutputFileTest, TextWrittenInPiecesIsTheWholeTextsBytes) {
  TempDir dir;
  const std::string answer = "pid 1 (\xc3\x9c)\n  #0 \x1b[2J\r\xc2\x9b\nno newline \xe2\x82\xac";
  const std::string whole = dir.path() + "/whole.txt";
  {
    auto out = OutputFile::Open(whole, {});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_TRUE((*out)->WriteText(answer).ok());
    ASSERT_TRUE((*out)->Close().ok());
  }
  ASSERT_EQ(Slurp(whole), "pid 1 (\xc3\x9c)\n  #0 \\x1b[2J\\x0d\\u009b\nno newline \xe2\x82\xac");
  for (size_t step : {1, 2, 3, 7, 100}) {
    SCOPED_TRACE(step);
    const std::string path = dir.path() + "/pieces.txt";
    auto out = OutputFile::Open(path, {});
    ASSERT_TRUE(out.ok()) << out.status();
    for (size_t i = 0; i < answer.size(); i += step) ASSERT_TRUE((*out)->WriteTextPiece(answer.substr(i, step)).ok());
    ASSERT_TRUE((*out)->Close().ok());
    EXPECT_EQ(Slurp(path), Slurp(whole));
  }
}

TEST(RunGuardedTest, AnEscapingExceptionIsExitOneWithAMessage) {
  EXPECT_EQ(RunGuarded([] { return 0; }), 0);
  EXPECT_EQ(RunGuarded([] { return 2; }), 2);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunGuarded([]() -> int { throw std::runtime_error("basic_ios::clear: iostream error"); }), 1);
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), HasSubstr("internal error: basic_ios::clear"));
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunGuarded([]() -> int { throw std::bad_alloc(); }), 1);
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), HasSubstr("out of memory"));
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunGuarded([]() -> int { throw 42; }), 1);
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), HasSubstr("unknown exception"));
}

}  // namespace
}  // namespace pageblame::cli

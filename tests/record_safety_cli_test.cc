// Issue 44 as it was reproduced: `pageblame record` runs as root in places
// another local user (`nobody` here) can reach, and side files found beside
// a trace decide answers. Each attack of the campaign, for real: links
// nobody plants where record writes, a diagnostics socket nobody serves for
// a process that is not even .NET; and perf failing at start, said in perf's
// words. (Side files nobody puts beside a trace: side_file_trust_cli_test.)
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/shared_dir_for_test.h"
#include "processor/base/temp_dir_for_test.h"
#include "tests/cli_runner.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

#define SKIP_UNLESS_ROOT() \
  if (!IsRoot()) GTEST_SKIP() << "needs root (and the user nobody), as record runs"

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool IsLink(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

// A shell command run as nobody.
CliRun AsNobody(const std::string& command) {
  return Shell(absl::StrCat("setpriv --reuid=65534 --regid=65534 --clear-groups sh -c '", command, "'"));
}

std::string Record(const std::string& args) {
  return absl::StrCat(PAGEBLAME_BINARY_DIR, "/bin/pageblame record --rss-every 0.2 ", args, " -- ", SourceDir(),
                      "/traces/bin/commit /tmp");
}

class RecordSafetyCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    victim_ = victim_dir_.path() + "/secret";
    std::ofstream(victim_) << "root's own";
    ::chmod(victim_.c_str(), 0600);
  }
  void ExpectVictimUntouched() const { EXPECT_EQ(Slurp(victim_), "root's own"); }

  TempDir victim_dir_{"pb_victim"};
  std::string victim_;
};

// nobody plants DIR/t.data.rss -> a root-only file; root records into DIR.
// Before: the victim was truncated and overwritten with snapshot bytes.
TEST_F(RecordSafetyCliTest, APlantedLinkInASharedDirectoryIsNeverFollowed) {
  SKIP_UNLESS_ROOT();
  SharedDirForTest shared;
  const std::string trace = shared.path() + "/t.data";
  ASSERT_EQ(AsNobody(absl::StrCat("ln -s ", victim_, " ", trace, ".rss")).exit_code, 0);
  const CliRun refused = Shell(Record("-o " + trace));
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_THAT(refused.err, HasSubstr(shared.path() + " is writable by anyone (mode 1777)"));
  EXPECT_THAT(refused.err, HasSubstr("--force"));
  EXPECT_FALSE(Exists(trace));
  ExpectVictimUntouched();

  // --force: recorded all the same, through no link.
  const CliRun forced = Shell(Record("--force -o " + trace));
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  ExpectVictimUntouched();
  EXPECT_FALSE(IsLink(trace + ".rss"));
  struct stat st;
  ASSERT_EQ(::stat((trace + ".rss").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  const CliRun maps = Pageblame("maps -i " + trace);
  EXPECT_EQ(maps.exit_code, 0) << maps.err;
  EXPECT_THAT(maps.out, HasSubstr("(commit)"));
}

// A dangling link at the -o path: perf would have created the file it
// names (as root, wherever that is). Here the directory is nobody's own.
TEST_F(RecordSafetyCliTest, ADanglingLinkAtTheTraceIsSetAsideNotFollowed) {
  SKIP_UNLESS_ROOT();
  TempDir dir("pb_nobodys");
  ASSERT_EQ(::chown(dir.path().c_str(), kNobody, kNobody), 0);
  const std::string trace = dir.path() + "/t.data";
  const std::string made = victim_dir_.path() + "/made-by-perf";
  ASSERT_EQ(AsNobody(absl::StrCat("ln -s ", made, " ", trace)).exit_code, 0);
  const CliRun r = Shell(Record("-o " + trace));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr(trace + " was a symbolic link (moved, not followed): kept as " + trace + ".old"));
  EXPECT_FALSE(Exists(made));
  EXPECT_TRUE(IsLink(trace + ".old"));
  EXPECT_FALSE(IsLink(trace));
  EXPECT_EQ(Pageblame("maps -i " + trace).exit_code, 0);
}

// nobody listens on /tmp/dotnet-diagnostic-PID-1-socket for a pid that is
// not even .NET and answers "OK". Before: record said the perf map was
// turned on.
TEST_F(RecordSafetyCliTest, APlantedDiagnosticsSocketIsNotBelieved) {
  SKIP_UNLESS_ROOT();
  TempDir dir("pb_socket");
  const pid_t target = fork();
  if (target == 0) {
    execl("/bin/sleep", "sleep", "30", nullptr);
    _exit(127);
  }
  const std::string socket = absl::StrCat("/tmp/dotnet-diagnostic-", target, "-1-socket");
  // A server that answers every request with the runtime's OK.
  const std::string server = dir.path() + "/server.py";
  std::ofstream(server) << "import socket, os, sys\n"
                           "s = socket.socket(socket.AF_UNIX)\n"
                           "s.bind(sys.argv[1]); s.listen(4)\n"
                           "open(sys.argv[2], 'w').close()\n"
                           "ok = b'DOTNET_IPC_V1\\0' + bytes([24, 0, 0xff, 0, 0, 0, 0, 0, 0, 0])\n"
                           "while True:\n"
                           "    c, _ = s.accept(); c.recv(64); c.sendall(ok); c.close()\n";
  ::chmod(dir.path().c_str(), 0755);
  ::chmod(server.c_str(), 0644);
  const std::string ready = "/tmp/pb_socket_ready_" + std::to_string(target);
  ::unlink(ready.c_str());
  Shell(absl::StrCat("setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 ", server, " ", socket, " ", ready,
                     " >/dev/null 2>&1 & echo $! > ", dir.path(), "/server.pid"));
  for (int i = 0; i < 100 && !Exists(ready); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(Exists(ready)) << "the fake server did not start";
  const std::string trace = dir.path() + "/a.data";
  const CliRun r = Shell(absl::StrCat(PAGEBLAME_BINARY_DIR, "/bin/pageblame record --rss-every 0 -o ", trace,
                                      " -p ", target, " & rec=$!; sleep 2; kill -INT $rec; wait $rec"));
  Shell(absl::StrCat("kill $(cat ", dir.path(), "/server.pid)"));
  ::unlink(socket.c_str());
  ::unlink(ready.c_str());
  kill(target, SIGKILL);
  waitpid(target, nullptr, 0);
  EXPECT_THAT(r.err, HasSubstr(absl::StrCat(socket, ": served by pid ")));
  EXPECT_THAT(r.err, HasSubstr(absl::StrCat("(uid 65534), not by pid ", target,
                                            ": not its runtime's diagnostics server")));
  EXPECT_THAT(r.err, Not(HasSubstr("turned on through its diagnostics socket")));
}

// perf failing at start (a perf in PATH that fails as perf does): record
// says perf's status and its words, not "data size is 0" about the file it
// left.
TEST_F(RecordSafetyCliTest, PerfFailingAtStartIsSaidInItsWords) {
  TempDir dir("pb_fake_perf");
  const std::string perf = dir.path() + "/perf";
  std::ofstream(perf) << "#!/bin/sh\n"
                         "if [ \"$1\" = version ]; then echo 'perf version 6.1.0'; exit 0; fi\n"
                         "echo 'Error:' >&2\n"
                         "echo 'The sys_perf_event_open() syscall returned with 1 (Operation not permitted)' >&2\n"
                         "exit 255\n";
  ::chmod(perf.c_str(), 0755);
  const CliRun r =
      Shell(absl::StrCat("PATH=", dir.path(), ":$PATH ", PAGEBLAME_BINARY_DIR, "/bin/pageblame record -o ",
                         dir.path(), "/t.data -p ", getpid()));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(r.out.empty()) << r.out;
  // perf's own lines pass through as it writes them; then record's verdict.
  EXPECT_THAT(r.err, HasSubstr("pageblame: perf record failed (exit 255) and recorded nothing: perf said \"The "
                               "sys_perf_event_open() syscall returned with 1 (Operation not permitted)\"\n"));
  EXPECT_FALSE(Exists(dir.path() + "/t.data"));  // the empty trace made for it is gone
}

}  // namespace
}  // namespace pageblame::testing

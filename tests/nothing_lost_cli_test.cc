// Nothing lost, nothing hung, as a user meets it: every command that writes
// (-o of maps in each format, attribute, growth, report) never destroys the
// trace, an older answer or a device node; side files of the wrong kind (a
// perf map that is a directory, a FIFO, a link to /dev/zero) are warned
// about and the answer still comes; region tables and address lists that
// are directories or endless streams are refused with a message.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/temp_dir_for_test.h"
#include "tests/cli_runner.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

using ::testing::HasSubstr;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A copy of a bundled trace in `dir`, so that a test that goes wrong can
// never harm traces/.
std::string CopyTrace(const TempDir& dir, const std::string& name) {
  const std::string copy = dir.path() + "/" + name;
  std::filesystem::copy_file(TracePath(name), copy);
  return copy;
}

// Every command that writes -o FILE, reading `trace`.
std::vector<std::string> WritingCommands(const std::string& trace) {
  return {"maps -i " + trace,
          "maps --json -i " + trace,
          "maps --format pprof -i " + trace,
          "growth -i " + trace,
          "attribute --regions " + TracePath("maps/rules-trace.10981.maps") + " --pid 10981 -i " + trace,
          "report -i " + trace};
}

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().filename());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(NothingLostTest, AnOutputThatIsAnInputIsAUsageErrorAndTheInputStays) {
  TempDir dir;
  const std::string trace = CopyTrace(dir, "rules-trace.data");
  const std::string before = Slurp(trace);
  for (const std::string& cmd : WritingCommands(trace)) {
    SCOPED_TRACE(cmd);
    CliRun r = Pageblame(cmd + " -o " + trace);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr("is also an input of this command"));
    EXPECT_EQ(Slurp(trace), before);
  }
  // The region table given to attribute is an input too.
  const std::string table = dir.path() + "/regions.maps";
  std::filesystem::copy_file(TracePath("maps/rules-trace.10981.maps"), table);
  CliRun r = Pageblame("attribute -i " + trace + " --pid 10981 --regions " + table + " -o " + table);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(Slurp(table), Slurp(TracePath("maps/rules-trace.10981.maps")));
}

TEST(NothingLostTest, AFailedCommandKeepsTheOldAnswerAndLeavesNoTemporaryFile) {
  TempDir dir;
  const std::string trace = CopyTrace(dir, "rules-trace.data");
  const std::string old = dir.path() + "/old.json";
  for (const std::string& cmd : WritingCommands(trace)) {
    SCOPED_TRACE(cmd);
    std::ofstream(old) << "the answer of yesterday";
    // A time outside the trace fails after the output was opened.
    CliRun r = Pageblame(cmd + (cmd.rfind("growth", 0) == 0 ? " --to 1" : " --at 1") + " -o " + old);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(Slurp(old), "the answer of yesterday");
    // The recording's index (TRACE.index) is kept beside the trace, whole.
    EXPECT_THAT(Entries(dir.path()),
                ::testing::ElementsAre("old.json", "rules-trace.data", "rules-trace.data.index"));
  }
  // And a command that succeeds replaces it.
  CliRun ok = Pageblame("growth --json -i " + trace + " -o " + old);
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_THAT(Slurp(old), HasSubstr("\"growth_bytes\""));
  EXPECT_THAT(Entries(dir.path()), ::testing::ElementsAre("old.json", "rules-trace.data", "rules-trace.data.index"));
}

// A private device that answers every write with ENOSPC (the node /dev/full
// is): each command fails with exit 1 and the node is still there.
TEST(NothingLostTest, AFullDeviceIsNeverRemoved) {
  if (geteuid() != 0) GTEST_SKIP() << "mknod needs root";
  TempDir dir;
  const std::string trace = CopyTrace(dir, "rules-trace.data");
  const std::string dev = dir.path() + "/full";
  ASSERT_EQ(::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 7)), 0) << std::strerror(errno);
  for (const std::string& cmd : WritingCommands(trace)) {
    SCOPED_TRACE(cmd);
    CliRun r = Pageblame(cmd + " -o " + dev);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr("No space left on device"));
    struct stat st;
    ASSERT_EQ(::stat(dev.c_str(), &st), 0) << "the device node was removed";
    EXPECT_TRUE(S_ISCHR(st.st_mode));
  }
}

// node-trace.data's JIT frames are named by perf-11358.map beside it; here
// that name is something else. The answer still comes, with a warning.
TEST(NothingLostTest, APerfMapOfTheWrongKindIsWarnedAboutAndSkipped) {
  TempDir dir;
  const std::string trace = CopyTrace(dir, "node-trace.data");
  const std::string map = dir.path() + "/perf-11358.map";
  struct Case {
    std::string name, what;
    std::function<void()> make;
  };
  const std::vector<Case> cases = {
      {"directory", "is a directory", [&] { std::filesystem::create_directory(map); }},
      {"fifo", "is a FIFO", [&] { ASSERT_EQ(::mkfifo(map.c_str(), 0600), 0); }},
      {"link to /dev/zero", "is a character device", [&] { std::filesystem::create_symlink("/dev/zero", map); }},
  };
  const CliRun named = Pageblame("maps --json --pid 11358 -i " + trace + " --perf-map-dir " + SourceDir() + "/traces");
  ASSERT_EQ(named.exit_code, 0) << named.err;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::filesystem::remove_all(map);
    c.make();
    // timeout: a FIFO must not hang the run.
    CliRun r = Shell("timeout 60 " + std::string(PAGEBLAME_BINARY_DIR) + "/bin/pageblame maps --json --pid 11358 -i " +
                     trace + " --perf-map-dir " + SourceDir() + "/traces");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.err, HasSubstr(map + ": " + c.what));
    EXPECT_THAT(r.err, HasSubstr("its JIT frames stay unnamed"));
    // The next candidate (--perf-map-dir) still names them: the same answer.
    EXPECT_EQ(r.out, named.out);
  }
}

TEST(NothingLostTest, TablesAndAddressListsOfTheWrongKindAreRefused) {
  TempDir dir;
  const std::string trace = TracePath("rules-trace.data");
  struct Case {
    std::string args, message;
  };
  const std::vector<Case> cases = {
      {"diff /dev/zero " + TracePath("maps/rules-trace.10981.maps"), "/dev/zero: more than 256 MiB"},
      {"attribute -i " + trace + " --regions /dev/zero", "/dev/zero: more than 256 MiB"},
      {"attribute -i " + trace + " --regions " + dir.path(), "is a directory, not a region table"},
      {"query -i " + trace + " --addresses " + dir.path() + " 0x1000", "is a directory, not a list of addresses"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    CliRun r = Pageblame(c.args);
    ExpectOneLineError(r, c.message);
    EXPECT_EQ(r.exit_code, 1);
  }
}

}  // namespace
}  // namespace pageblame::testing

// Issue 33 as a user meets it: node-trace.data's JIT frames are named by
// perf-11358.map. Put that map in a directory anyone can write (sticky,
// 01777, as /tmp is) and make another user its owner: pageblame warns,
// naming the file and its owner, and leaves the frames unnamed; -f/--force
// uses it; owned by root it is used; writable by others it is not.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "processor/base/shared_dir_for_test.h"
#include "processor/base/temp_dir_for_test.h"
#include "tests/cli_runner.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

#define SKIP_UNLESS_ROOT() \
  if (!IsRoot()) GTEST_SKIP() << "choosing a file's owner needs root"

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Frames of JIT code (perf's DSO name for it) in a `maps --json` answer, and
// how many of them have a name.
struct JitFrames {
  int all = 0, named = 0;
};
JitFrames CountJitFrames(const std::string& json) {
  JitFrames n;
  for (const auto& region : nlohmann::json::parse(json)) {
    if (region["origin"].is_null()) continue;
    for (const auto& f : region["origin"]["stack"]) {
      if (f["dso"] != "/tmp/perf-11358.map") continue;
      ++n.all;
      n.named += f["symbol"].is_null() ? 0 : 1;
    }
  }
  return n;
}

class SideFileTrustCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The trace alone in a directory of its own: no map beside it.
    trace_ = trace_dir_.path() + "/node-trace.data";
    std::filesystem::copy_file(TracePath("node-trace.data"), trace_);
  }
  // maps --json of pid 11358, perf maps looked for in `dir` after the
  // trace's directory and /tmp.
  CliRun Maps(const std::string& dir, const std::string& extra = "") const {
    return Pageblame("maps --json --pid 11358 -i " + trace_ + " --perf-map-dir " + dir + extra);
  }
  std::string PutMap(uid_t owner, mode_t mode) const {
    return shared_.Write("perf-11358.map", Slurp(TracePath("perf-11358.map")), owner, mode);
  }
  // The answer with the map from traces/, a directory only its owner writes.
  std::string Named() const {
    const CliRun r = Maps(SourceDir() + "/traces");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }

  TempDir trace_dir_;
  SharedDirForTest shared_;
  std::string trace_;
};

TEST_F(SideFileTrustCliTest, AnotherUsersMapIsIgnoredWithAWarningAndUsedWithForce) {
  SKIP_UNLESS_ROOT();
  const std::string map = PutMap(kNobody, 0644);
  const CliRun refused = Maps(shared_.path());
  ASSERT_EQ(refused.exit_code, 0) << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("pageblame: warning: " + map + ": owned by nobody (uid 65534), not by "
                                     "root or the user running pageblame (root (uid 0)), in a directory "
                                     "others can write: ignored (use -f to override); its JIT frames "
                                     "stay unnamed\n"));
  const JitFrames unnamed = CountJitFrames(refused.out);
  EXPECT_GT(unnamed.all, 0);
  EXPECT_EQ(unnamed.named, 0);

  const std::string named = Named();
  EXPECT_EQ(CountJitFrames(named).named, unnamed.all);
  for (const char* force : {" -f", " --force"}) {
    SCOPED_TRACE(force);
    const CliRun forced = Maps(shared_.path(), force);
    ASSERT_EQ(forced.exit_code, 0) << forced.err;
    EXPECT_THAT(forced.err, ::testing::Not(HasSubstr("warning")));
    EXPECT_EQ(forced.out, named);
  }
}

TEST_F(SideFileTrustCliTest, ARootOwnedMapIsUsed) {
  SKIP_UNLESS_ROOT();
  PutMap(0, 0644);
  const CliRun r = Maps(shared_.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("warning")));
  EXPECT_EQ(r.out, Named());
}

TEST_F(SideFileTrustCliTest, ARootOwnedMapOthersMayWriteIsIgnored) {
  SKIP_UNLESS_ROOT();
  const std::string map = PutMap(0, 0666);
  const CliRun r = Maps(shared_.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr(map + ": writable by its group or others (mode 0666, owner root (uid 0))"));
  EXPECT_EQ(CountJitFrames(r.out).named, 0);
}

// A trace kept in /tmp has /tmp as its directory: the map beside it is
// still one anyone could have put there.
TEST_F(SideFileTrustCliTest, BesideATraceInASharedDirectoryTheRuleHolds) {
  SKIP_UNLESS_ROOT();
  const std::string map = PutMap(kNobody, 0644);
  const std::string trace = shared_.path() + "/node-trace.data";
  std::filesystem::copy_file(trace_, trace);
  const CliRun r = Pageblame("maps --json --pid 11358 -i " + trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr(map + ": owned by nobody"));
  EXPECT_EQ(CountJitFrames(r.out).named, 0);
}

// Beside a trace in the user's own directory, any owner is the user's choice.
TEST_F(SideFileTrustCliTest, BesideATraceInAPrivateDirectoryAnyMapIsUsed) {
  SKIP_UNLESS_ROOT();
  const std::string map = trace_dir_.path() + "/perf-11358.map";
  std::filesystem::copy_file(TracePath("perf-11358.map"), map);
  ASSERT_EQ(::chown(map.c_str(), kNobody, kNobody), 0);
  const CliRun r = Pageblame("maps --json --pid 11358 -i " + trace_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("warning")));
  EXPECT_EQ(r.out, Named());
}

// Issue 44: residency.data (recorded by `pageblame record`) copied with its snapshots
// into a directory anyone can write; tables and snapshots put beside it.
class PlantedSideFilesCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    trace_ = shared_.path() + "/r.data";
    std::filesystem::copy_file(TracePath("residency.data"), trace_);
    std::filesystem::copy_file(TracePath("residency.data.rss"), trace_ + ".rss");
    ::mkdir((trace_ + ".runtime").c_str(), 0700);
  }
  CliRun Unaccounted(const std::string& extra = "") const {
    return Pageblame(absl::StrCat("attribute -i ", trace_, " --pid 32331 --unaccounted ", extra));
  }
  // A "runtime table" claiming the whole address space: it would hide
  // everything from the unaccounted answer.
  std::string PutTable(uint64_t time_ns) const {
    const std::string path = absl::StrCat(trace_, ".runtime/32331-", time_ns, ".txt");
    std::ofstream(path) << "0-7ffffffff000 # GCHeap\n";
    return path;
  }

  SharedDirForTest shared_;
  std::string trace_;
};

TEST_F(PlantedSideFilesCliTest, AnotherUsersTableHidesNothing) {
  SKIP_UNLESS_ROOT();
  const std::string table = PutTable(12502830000000);
  ASSERT_EQ(::chown((trace_ + ".runtime").c_str(), kNobody, kNobody), 0);
  ASSERT_EQ(::chown(table.c_str(), kNobody, kNobody), 0);
  const CliRun r = Unaccounted();
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("no .NET runtime table of pid 32331"));
  EXPECT_THAT(r.err, HasSubstr("not used: " + trace_ + ".runtime: owned by nobody (uid 65534)"));
  // The user can say it is theirs.
  const CliRun forced = Unaccounted("--force");
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_THAT(forced.err, HasSubstr("0 B"));
}

TEST_F(PlantedSideFilesCliTest, ATableStampedAfterTheTraceIsNotUsed) {
  SKIP_UNLESS_ROOT();
  PutTable(uint64_t{99999} * 1000000000);
  const CliRun r = Unaccounted();
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("stamped 99999.000000, after the trace ended (12502.96"));
  // One stamped within it (root's, 0600 as record makes them) is used.
  ::chmod(PutTable(12502830000000).c_str(), 0600);
  const CliRun used = Unaccounted();
  EXPECT_EQ(used.exit_code, 0) << used.err;
}

TEST_F(PlantedSideFilesCliTest, AnotherUsersSnapshotsDecideNothing) {
  SKIP_UNLESS_ROOT();
  ASSERT_EQ(::chown((trace_ + ".rss").c_str(), kNobody, kNobody), 0);
  const CliRun r = Pageblame("maps -i " + trace_ + " --pid 32331");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr(trace_ + ".rss: owned by nobody (uid 65534)"));
  EXPECT_THAT(r.err, HasSubstr("resident bytes are left out"));
  EXPECT_THAT(r.out, Not(HasSubstr("resident: snapshot")));
  const CliRun forced = Pageblame("maps -f -i " + trace_ + " --pid 32331");
  EXPECT_THAT(forced.out, HasSubstr("resident: snapshot"));
}

}  // namespace
}  // namespace pageblame::testing

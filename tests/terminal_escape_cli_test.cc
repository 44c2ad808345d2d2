// Issue 44: names a hostile program chose reach root's terminal. On a copy
// of node-trace.data whose JIT methods (perf-11358.map), comm and libc path
// hold terminal controls, a newline, C1 CSI and bytes that are not UTF-8
// (tests/hostile_trace.h), every text answer and every message is safe to
// print: no control byte but the layout's own newlines, the names said with
// escapes (\x1b, \u009b, \xff), non-ASCII names kept, no line forged; JSON
// carries the real names.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/temp_dir_for_test.h"
#include "tests/cli_runner.h"
#include "tests/hostile_trace.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

// The names as text says them (docs/cli.md, "Names in text").
constexpr char kMethodText[] = "\\x1b]0;title\\x07\\x1b[2J\\x1b[31m\\x08\\x08\\x0d\\u009b\\xff\xc3\x9c" "ber:";
constexpr char kCommText[] = "\\x1b]0;t\\x07\\x0a";
constexpr char kLibcText[] = "/usr/lib/x86_64-linux-gnu/\\x1b\\u009b\\x0a\\x0d\\x08\\xff.6";
// JSON's: the real bytes, but for the one that is not UTF-8 (U+FFFD, as
// docs/cli.md says of every such byte in JSON).
const std::string kMethodJson = "\x1b]0;title\x07\x1b[2J\x1b[31m\b\b\r\xc2\x9b\xef\xbf\xbd\xc3\x9c" "ber:";
const std::string kLibcJson = "/usr/lib/x86_64-linux-gnu/\x1b\xc2\x9b\n\r\b\xef\xbf\xbd.6";

class TerminalEscapeCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    hostile_dir_ = new TempDir("pb_hostile");
    auto trace = MakeHostileTrace(hostile_dir_->path());
    ASSERT_TRUE(trace.ok()) << trace.status();
    hostile_ = new std::string(*trace);
    // The same trace and map as recorded, for the line counts.
    plain_dir_ = new TempDir("pb_plain");
    plain_ = new std::string(plain_dir_->path() + "/node-trace.data");
    std::filesystem::copy_file(TracePath("node-trace.data"), *plain_);
    std::filesystem::copy_file(TracePath("perf-11358.map"), plain_dir_->path() + "/perf-11358.map");
    std::ofstream(hostile_dir_->path() + "/regions.txt") << "0x1000-0x7ffffffff000\n";
  }
  static void TearDownTestSuite() {
    delete hostile_dir_;
    delete plain_dir_;
    delete hostile_;
    delete plain_;
  }
  static std::string Regions() { return hostile_dir_->path() + "/regions.txt"; }

  // `pageblame COMMAND -i TRACE --pid 11358 ARGS`.
  static CliRun Run(const std::string& command, const std::string& trace, const std::string& args) {
    return Pageblame(absl::StrCat(command, " -i ", trace, " --buildid-dir ", SourceDir(),
                                  "/traces/buildid-cache --pid ", kHostilePid, " ", args));
  }
  // The start of the first region whose creating stack has a hostile JIT
  // frame, from maps --json.
  static std::string JitRegion() {
    const CliRun r = Run("maps --json", *hostile_, "");
    for (const Json& region : Json::parse(r.out)) {
      if (region["origin"].is_null()) continue;
      for (const Json& f : region["origin"]["stack"]) {
        if (f["symbol"].is_string() && f["symbol"].get<std::string>().rfind(kMethodJson, 0) == 0) {
          return region["start"];
        }
      }
    }
    ADD_FAILURE() << "no region made by a JIT frame";
    return "0x0";
  }

  static TempDir* hostile_dir_;
  static TempDir* plain_dir_;
  static std::string* hostile_;
  static std::string* plain_;
};
TempDir* TerminalEscapeCliTest::hostile_dir_ = nullptr;
TempDir* TerminalEscapeCliTest::plain_dir_ = nullptr;
std::string* TerminalEscapeCliTest::hostile_ = nullptr;
std::string* TerminalEscapeCliTest::plain_ = nullptr;

size_t Lines(const std::string& s) { return std::count(s.begin(), s.end(), '\n'); }

struct TextCase {
  std::string command, args;
  bool comm;  // the answer names the process
  // A row per application method: which frames are the application's
  // depends on the names (a hostile name is no runtime's), so its lines are
  // not the plain trace's; its --group stack twin's are.
  bool by_method = false;
};

TEST_F(TerminalEscapeCliTest, TextAnswersSayEveryNameEscaped) {
  const std::string jit = JitRegion();
  const std::vector<TextCase> cases = {
      {"maps", "", true},
      {"maps", "--frames all --split", true},
      {"query", "--history " + jit, true},
      {"growth", "--detail", true, true},
      {"growth", "--detail --group stack", true},
      {"growth", "--format folded", false},
      {"attribute", "--detail --regions " + Regions(), true, true},
      {"attribute", "--detail --group stack --regions " + Regions(), true},
      {"attribute", "--format folded --regions " + Regions(), false},
  };
  for (const TextCase& c : cases) {
    SCOPED_TRACE(c.command + " " + c.args);
    const CliRun r = Run(c.command, *hostile_, c.args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(TerminalSafe(r.out));
    EXPECT_TRUE(TerminalSafe(r.err)) << r.err;
    // --frames all says the innermost frames (libc's, the runtime's);
    // folded stacks write the frame separator ';' as ':'.
    if (c.args.find("--frames all") == std::string::npos) {
      const bool folded = c.args.find("folded") != std::string::npos;
      const std::string method = folded ? absl::StrReplaceAll(kMethodText, {{";", ":"}}) : kMethodText;
      EXPECT_TRUE(absl::StrContains(r.out, method));
    }
    // A newline in the comm does not end the line that names the process.
    if (c.comm) {
      EXPECT_TRUE(absl::StrContains(r.out, absl::StrCat("pid ", kHostilePid, " (", kCommText, ")")));
    }
    // Nor does one in a name make more lines than the trace as recorded has.
    if (c.by_method) continue;
    const CliRun plain = Run(c.command, *plain_, c.args);
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    EXPECT_EQ(Lines(r.out), Lines(plain.out));
  }
}

TEST_F(TerminalEscapeCliTest, FullStacksSayPathsAndCommsEscaped) {
  const CliRun r = Run("query", *hostile_, JitRegion());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(TerminalSafe(r.out));
  EXPECT_THAT(r.out, HasSubstr(absl::StrCat("by ", kCommText, " ", kHostilePid, "/", kHostilePid, "\n")));
  EXPECT_THAT(r.out, HasSubstr(absl::StrCat("(", kLibcText, ")\n")));
  EXPECT_THAT(r.out, HasSubstr(absl::StrCat(" ", kMethodText)));
}

TEST_F(TerminalEscapeCliTest, MessagesOnStderrSayPathsEscaped) {
  // -v names the DSOs it could not find: libc, by its hostile path.
  const CliRun r = Run("maps -v", *hostile_, "");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(TerminalSafe(r.err)) << r.err;
  EXPECT_THAT(r.err, HasSubstr(kLibcText));
  // An error that quotes what it cannot find.
  const CliRun bad = Pageblame(absl::StrCat("maps -i '", hostile_dir_->path(), "/no\x1b[2J\nsuch.data'"));
  ExpectOneLineError(bad, "no\\x1b[2J\\x0asuch.data");
  EXPECT_TRUE(TerminalSafe(bad.err)) << bad.err;
}

TEST_F(TerminalEscapeCliTest, JsonCarriesTheRealNames) {
  const std::string jit = JitRegion();
  const std::vector<std::pair<std::string, std::string>> commands = {{"maps --json", ""}, {"query --json", jit}};
  for (const auto& [command, args] : commands) {
    SCOPED_TRACE(command);
    const CliRun r = Run(command, *hostile_, args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // JSON's escapes make it safe as it is (C1 controls as \u009b too).
    EXPECT_TRUE(TerminalSafe(r.out));
    bool method = false, libc = false, comm = false;
    const Json answer = Json::parse(r.out);
    for (const Json& a : answer) {
      const Json& origin = a["origin"];
      if (origin.is_null()) continue;
      comm |= origin["comm"] == kHostileComm;
      for (const Json& f : origin["stack"]) {
        method |= f["symbol"].is_string() && f["symbol"].get<std::string>().rfind(kMethodJson, 0) == 0;
        libc |= f["dso"] == kLibcJson;
      }
    }
    EXPECT_TRUE(method);
    EXPECT_TRUE(libc);
    EXPECT_TRUE(comm);
  }
}

}  // namespace
}  // namespace pageblame::testing

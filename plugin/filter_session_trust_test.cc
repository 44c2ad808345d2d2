// The plugin's summary names frames perf did not name with the library's
// symbolizer, under the same rule as the CLI (base/side_file_trust.h): a
// perf map another user owns, in a directory anyone can write, is ignored,
// unless perf script itself was told -f (then perf reads it too). Here
// node-trace.data sits in a sticky 01777 directory with perf-11358.map
// beside it, owned by nobody.
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plugin/filter_session.h"
#include "plugin/summary_text_for_test.h"
#include "processor/base/shared_dir_for_test.h"

namespace pageblame::plugin {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kTraces[] = PAGEBLAME_SOURCE_DIR "/traces/";
// A region node mapped from JIT code (the frames of its stack that are in
// no file: perf-11358.map names them "JS:^ .../jit.js:1:1").
constexpr char kJitPage[] = "pages=0xedeac0000";
constexpr char kJitName[] = "JS:^ ";

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class FilterSessionTrustTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!IsRoot()) GTEST_SKIP() << "choosing a file's owner needs root";
    trace_ = shared_.Write("node-trace.data", Slurp(absl::StrCat(kTraces, "node-trace.data")), 0, 0644);
    map_ = shared_.Write("perf-11358.map", Slurp(absl::StrCat(kTraces, "perf-11358.map")), kNobody, 0644);
  }
  // The summary, perf script's command line being `argv`.
  std::string Summary(std::vector<std::string> argv, std::string* err) const {
    PerfEnvironment env;
    env.argv = std::move(argv);
    ::testing::internal::CaptureStderr();
    auto s = FilterSession::Start({kJitPage, "pid=11358", absl::StrCat("trace=", trace_)}, env);
    std::string text = s.ok() ? SummaryTextForTest(**s) : "";
    *err = ::testing::internal::GetCapturedStderr();
    EXPECT_TRUE(s.ok()) << s.status();
    return text;
  }

  SharedDirForTest shared_;
  std::string trace_, map_;
};

TEST_F(FilterSessionTrustTest, AnotherUsersMapIsIgnoredWithAWarning) {
  std::string err;
  const std::string text = Summary({"perf", "script", "--dlfilter", "pageblame-dlfilter.so"}, &err);
  EXPECT_THAT(text, HasSubstr("/tmp/perf-11358.map"));
  EXPECT_THAT(text, Not(HasSubstr(kJitName)));
  EXPECT_THAT(err, HasSubstr(map_ + ": owned by nobody (uid 65534)"));
}

TEST_F(FilterSessionTrustTest, PerfScriptsForceUsesIt) {
  std::string err;
  const std::string text = Summary({"perf", "script", "-f", "--dlfilter", "pageblame-dlfilter.so"}, &err);
  EXPECT_THAT(text, HasSubstr(kJitName));
  EXPECT_THAT(err, Not(HasSubstr("owned by nobody")));
}

}  // namespace
}  // namespace pageblame::plugin

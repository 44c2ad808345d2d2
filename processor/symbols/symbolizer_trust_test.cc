// JIT names from a perf map in a directory anyone can write (the /tmp the
// JITs write to; here a sticky directory of the test's own in its place)
// are used only when no other user could have written the map, or with
// force: otherwise a warning names the file and its owner and the frames
// stay unnamed (base/side_file_trust.h).
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/shared_dir_for_test.h"
#include "processor/symbols/symbolizer.h"
#include "processor/symbols/test_util.h"
#include "processor/symbols/symbolizer_for_test.h"

namespace pageblame::symbols {
namespace {

using ::testing::HasSubstr;

#define SKIP_UNLESS_ROOT() \
  if (!IsRoot()) GTEST_SKIP() << "choosing a file's owner needs root"

constexpr uint32_t kPid = 4242;
constexpr char kMap[] = "2000 100 EVIL::Spoofed()\n";

struct Scene {
  testing::TempDir trace_dir;  // private (0700): the trace sits here, no map beside it
  SharedDirForTest shared;     // stands for /tmp

  SymbolizerOptions Options(bool force) const {
    SymbolizerOptions o;
    o.debug_dir = trace_dir.path() + "/no-cache";
    o.trace_path = trace_dir.path() + "/perf.data";
    o.tmp_dir = shared.path();
    o.force = force;
    return o;
  }
  // The frame at 0x2004 of kPid, JIT code in anonymous memory; `warnings`
  // gets what was said on stderr.
  Frame Jit(bool force, std::string* warnings) const {
    SymbolizerWithMaps sym(Options(force));
    sym.maps().AddMapping(kPid, 0, 0x2000, 0x1000, 0, "//anon", "");
    ::testing::internal::CaptureStderr();
    Frame f = sym.Symbolize(kPid, 10, 0x2004);
    *warnings = ::testing::internal::GetCapturedStderr();
    return f;
  }
  std::string MapPath() const { return absl::StrCat(shared.path(), "/perf-", kPid, ".map"); }
};

TEST(SymbolizerTrustTest, AnotherUsersMapIsIgnoredWithAWarning) {
  SKIP_UNLESS_ROOT();
  Scene s;
  s.shared.Write(absl::StrCat("perf-", kPid, ".map"), kMap, kNobody, 0644);
  std::string warnings;
  Frame f = s.Jit(/*force=*/false, &warnings);
  EXPECT_EQ(f.symbol, std::nullopt);
  EXPECT_EQ(f.dso, "/tmp/perf-4242.map");  // perf's name for JIT code, named or not
  EXPECT_EQ(warnings, "pageblame: warning: " + s.MapPath() +
                          ": owned by nobody (uid 65534), not by root or the user running pageblame "
                          "(root (uid 0)), in a directory others can write: ignored (use -f to "
                          "override); its JIT frames stay unnamed\n");
}

TEST(SymbolizerTrustTest, ForceUsesAnotherUsersMap) {
  SKIP_UNLESS_ROOT();
  Scene s;
  s.shared.Write(absl::StrCat("perf-", kPid, ".map"), kMap, kNobody, 0644);
  std::string warnings;
  EXPECT_EQ(s.Jit(/*force=*/true, &warnings).symbol, "EVIL::Spoofed()");
  EXPECT_EQ(warnings, "");
}

TEST(SymbolizerTrustTest, ARootOwnedMapIsUsed) {
  SKIP_UNLESS_ROOT();
  Scene s;
  s.shared.Write(absl::StrCat("perf-", kPid, ".map"), "2000 100 Program::Main\n", 0, 0644);
  std::string warnings;
  EXPECT_EQ(s.Jit(/*force=*/false, &warnings).symbol, "Program::Main");
  EXPECT_EQ(warnings, "");
}

TEST(SymbolizerTrustTest, ARootOwnedMapOthersMayWriteIsIgnored) {
  SKIP_UNLESS_ROOT();
  Scene s;
  s.shared.Write(absl::StrCat("perf-", kPid, ".map"), kMap, 0, 0666);
  std::string warnings;
  EXPECT_EQ(s.Jit(/*force=*/false, &warnings).symbol, std::nullopt);
  EXPECT_THAT(warnings, HasSubstr(": writable by its group or others (mode 0666, owner root (uid 0))"));
}

TEST(SymbolizerTrustTest, AMapBesideTheTraceIsTheUsersChoice) {
  SKIP_UNLESS_ROOT();
  Scene s;
  const std::string beside = absl::StrCat(s.trace_dir.path(), "/perf-", kPid, ".map");
  testing::WriteFile(beside, "2000 100 Beside::Trace\n");
  ASSERT_EQ(::chown(beside.c_str(), kNobody, kNobody), 0);
  std::string warnings;
  EXPECT_EQ(s.Jit(/*force=*/false, &warnings).symbol, "Beside::Trace");
  EXPECT_EQ(warnings, "");
}

TEST(SymbolizerTrustTest, AfterAnIgnoredMapThePerfMapDirIsStillLookedIn) {
  SKIP_UNLESS_ROOT();
  Scene s;
  s.shared.Write(absl::StrCat("perf-", kPid, ".map"), kMap, kNobody, 0644);
  testing::TempDir mine;  // not world-writable: the user's choice
  testing::WriteFile(absl::StrCat(mine.path(), "/perf-", kPid, ".map"), "2000 100 Mine\n");
  SymbolizerOptions o = s.Options(/*force=*/false);
  o.perf_map_dir = mine.path();
  SymbolizerWithMaps sym(o);
  sym.maps().AddMapping(kPid, 0, 0x2000, 0x1000, 0, "//anon", "");
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(sym.Symbolize(kPid, 10, 0x2004).symbol, "Mine");
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), HasSubstr("owned by nobody"));
  EXPECT_EQ(sym.stats().perf_maps_loaded, 1u);
}

}  // namespace
}  // namespace pageblame::symbols

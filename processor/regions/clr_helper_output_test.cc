#include "processor/regions/clr_helper_output.h"

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pageblame::regions {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Real output of tools/dotnet-regions (ClrMD 4.2) on traces/src/dotnet-leak
// at READY: -pid.helper attached to the live process, -core.helper on its
// createdump core taken right after.
std::string Slurp(const std::string& name) {
  std::ifstream f(absl::StrCat(PAGEBLAME_SOURCE_DIR, "/processor/regions/testdata/", name));
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

absl::StatusOr<ClrHelperOutput> Parse(std::string text) {
  return ClrHelperOutputParser::Parse(TextLines("helper", std::move(text)));
}

// Counts taken with grep on the files.
TEST(ClrHelperOutputTest, LiveProcess) {
  absl::StatusOr<ClrHelperOutput> out = Parse(Slurp("dotnet-regions-pid.helper"));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->live);
  EXPECT_EQ(out->target, "15469");
  EXPECT_THAT(out->runtime, EndsWith("/libcoreclr.so"));
  EXPECT_EQ(out->build_id, "79945f51fb2612f13b7667a10a8fd29122664791");
  EXPECT_THAT(out->dac, EndsWith("/libmscordaccore.so"));
  EXPECT_EQ(out->ranges.size(), 71u);
  EXPECT_EQ(out->images.size(), 26u);
  EXPECT_TRUE(out->warnings.empty());
  int gc = 0;
  for (const ClrRange& r : out->ranges) {
    EXPECT_LT(r.start, r.end);
    gc += r.kind == "GCHeap";
  }
  EXPECT_EQ(gc, 21);
  // The maps lines, as the kernel printed them.
  EXPECT_EQ(std::count(out->maps.begin(), out->maps.end(), '\n'), 282);
  EXPECT_THAT(out->maps, HasSubstr("[vsyscall]\n"));
}

TEST(ClrHelperOutputTest, CoreDump) {
  absl::StatusOr<ClrHelperOutput> out = Parse(Slurp("dotnet-regions-core.helper"));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(out->live);
  EXPECT_EQ(out->target, "app.core");
  EXPECT_EQ(out->ranges.size(), 71u);
  EXPECT_EQ(out->images.size(), 32u);
  EXPECT_TRUE(out->maps.empty());
}

TEST(ClrHelperOutputTest, DamagedOutputIsAnError) {
  const std::string real = Slurp("dotnet-regions-core.helper");
  struct Case {
    std::string text, message;
  } cases[] = {
      {real.substr(0, real.rfind("end\t")), "ends without its end record"},
      {absl::StrReplaceAll(real, {{"end\t103", "end\t104"}}), "the end record says 104"},
      {absl::StrReplaceAll(real, {{"range\t7fdba3000000\t7fdba3003000", "range\t7fdba3003000\t7fdba3000000"}}),
       "START < END"},
      {absl::StrReplaceAll(real, {{"range\t7fdba3000000", "ranges\t7fdba3000000"}}), "unknown record"},
      {absl::StrReplaceAll(real, {{"\tPinned\n", "\n"}}), "a 'range' record has 5 fields, got 4"},
      {"usage: dotnet-regions\n", "not the dotnet-regions helper's output"},
      {"", "not the dotnet-regions helper's output"},
      {std::string(ClrHelperOutputParser::kMagic) + "\nend\t0\n", "one target and one runtime"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ClrHelperOutput> out = Parse(c.text);
    ASSERT_FALSE(out.ok()) << c.message;
    EXPECT_THAT(std::string(out.status().message()), StartsWith("helper")) << c.message;
    EXPECT_THAT(std::string(out.status().message()), HasSubstr(c.message));
  }
}

}  // namespace
}  // namespace pageblame::regions

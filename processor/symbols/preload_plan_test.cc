#include "processor/symbols/preload_plan.h"

#include <vector>

#include "gtest/gtest.h"

namespace pageblame::symbols {
namespace {

std::vector<std::string> Paths(const std::vector<PreloadPlan::Dso>& dsos) {
  std::vector<std::string> out;
  for (const auto& d : dsos) out.push_back(d.path + ":" + std::to_string(d.frames));
  return out;
}

TEST(PreloadPlanTest, NamesTheDsosHoldingFramesMostFramesFirst) {
  PreloadPlan plan;
  plan.AddMapping(0x1000, 0x1000, "/bin/prog", "");
  plan.AddMapping(0x7000, 0x2000, "/lib/libc.so.6", "");
  plan.AddMapping(0x9000, 0x1000, "/lib/libm.so.6", "");  // no frame in it
  plan.AddMapping(0xa000, 0x1000, "/lib/libc.so.6", "");  // libc's other segment
  // Repeats and disorder are fine; the end of a mapping is not in it.
  const std::vector<uint64_t> ips = {0x8fff, 0x1000, 0x7000, 0xa010, 0x1fff, 0x2000, 0x7000, 0x9000 - 1};
  EXPECT_EQ(Paths(plan.Needed(ips)),
            (std::vector<std::string>{"/lib/libc.so.6:3", "/bin/prog:2"}));
}

TEST(PreloadPlanTest, TiesKeepTheOrderTheDsosWereMappedIn) {
  PreloadPlan plan;
  plan.AddMapping(0x5000, 0x1000, "/lib/b.so", "");
  plan.AddMapping(0x1000, 0x1000, "/lib/a.so", "");
  EXPECT_EQ(Paths(plan.Needed({0x1000, 0x5000})),
            (std::vector<std::string>{"/lib/b.so:1", "/lib/a.so:1"}));
}

TEST(PreloadPlanTest, ABuildIdMakesAnotherDsoAndARepeatedMappingCountsOnce) {
  PreloadPlan plan;
  plan.AddMapping(0x1000, 0x1000, "/bin/prog", "aa");
  plan.AddMapping(0x1000, 0x1000, "/bin/prog", "aa");  // exec'd again: the same
  plan.AddMapping(0x3000, 0x1000, "/bin/prog", "bb");  // a rebuilt binary
  EXPECT_EQ(plan.mappings(), 2u);
  std::vector<PreloadPlan::Dso> got = plan.Needed({0x1800, 0x3800, 0x3900});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].build_id, "bb");
  EXPECT_EQ(got[0].frames, 2u);
  EXPECT_EQ(got[1].build_id, "aa");
  EXPECT_EQ(got[1].frames, 1u);
}

TEST(PreloadPlanTest, NothingWithoutFramesOrMappings) {
  PreloadPlan plan;
  EXPECT_TRUE(plan.Needed({0x1000}).empty());
  plan.AddMapping(0x1000, 0, "/bin/empty", "");  // a zero-length record
  plan.AddMapping(0x2000, 0x1000, "/bin/prog", "");
  EXPECT_EQ(plan.mappings(), 1u);
  EXPECT_TRUE(plan.Needed({}).empty());
  // A mapping reaching the top of the address space does not wrap.
  plan.AddMapping(UINT64_MAX - 0xfff, 0x2000, "/bin/top", "");
  EXPECT_EQ(Paths(plan.Needed({UINT64_MAX - 1})), (std::vector<std::string>{"/bin/top:1"}));
}

}  // namespace
}  // namespace pageblame::symbols

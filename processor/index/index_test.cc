#include <random>
#include <set>

#include "gtest/gtest.h"
#include "processor/index/interval_index.h"
#include "processor/index/stack_table.h"

namespace pageblame::index {
namespace {

TEST(StackTableTest, InternsEachUniqueStackOnce) {
  StackTable t;
  std::vector<uint64_t> a = {1, 2, 3}, b = {1, 2}, c = {1, 2, 3};
  StackId ia = t.Intern(a), ib = t.Intern(b), ic = t.Intern(c);
  EXPECT_EQ(ia, ic);
  EXPECT_NE(ia, ib);
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.num_frames(), 5u);  // {1,2,3} and {1,2} have different outermost frames
  EXPECT_EQ(t.Ips(ib), b);
  EXPECT_TRUE(t.Ips(StackId::Invalid()).empty());
}

TEST(IntervalIndexTest, StabMatchesBruteForceOnRandomIntervals) {
  std::mt19937_64 rng(42);
  std::vector<IntervalIndex::Interval> iv;
  for (uint32_t i = 0; i < 2000; ++i) {
    uint64_t s = rng() % 100000, len = 1 + rng() % 5000;
    iv.push_back({s, s + len, i});
  }
  IntervalIndex idx;
  idx.Build(iv);
  for (int q = 0; q < 500; ++q) {
    uint64_t x = rng() % 110000;
    std::set<uint32_t> want, got;
    for (const auto& i : iv) if (i.start <= x && x < i.end) want.insert(i.payload);
    idx.Stab(x, [&](uint32_t p) { got.insert(p); });
    ASSERT_EQ(got, want) << x;
  }
}

}  // namespace
}  // namespace pageblame::index

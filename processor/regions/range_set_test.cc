#include "processor/regions/range_set.h"

#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pageblame::regions {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

std::vector<RangeSet::Range> Ranges(const RangeSet& s) { return {s.begin(), s.end()}; }

TEST(RangeSetTest, AddCoalescesOverlappingAndTouching) {
  RangeSet s;
  s.Add(0x1000, 0x3000);
  s.Add(0x3000, 0x4000);  // touching
  s.Add(0x6000, 0x7000);
  s.Add(0x5000, 0x5000);  // empty: ignored
  EXPECT_THAT(Ranges(s), ElementsAre(Pair(0x1000, 0x4000), Pair(0x6000, 0x7000)));
  s.Add(0x3800, 0x6800);  // bridges both
  EXPECT_THAT(Ranges(s), ElementsAre(Pair(0x1000, 0x7000)));
  EXPECT_EQ(s.TotalBytes(), 0x6000u);
}

TEST(RangeSetTest, SubtractSplitsAndTrims) {
  RangeSet s;
  s.Add(0x1000, 0x4000);
  s.Add(0x5000, 0x6000);
  s.Subtract(0x2000, 0x2800);
  EXPECT_THAT(Ranges(s), ElementsAre(Pair(0x1000, 0x2000), Pair(0x2800, 0x4000),
                                     Pair(0x5000, 0x6000)));
  s.Subtract(0x3000, 0x5800);  // tail of one, head of another
  EXPECT_THAT(Ranges(s), ElementsAre(Pair(0x1000, 0x2000), Pair(0x2800, 0x3000),
                                     Pair(0x5800, 0x6000)));
  s.Subtract(0x0, 0x10000);
  EXPECT_TRUE(s.empty());
}

TEST(RangeSetTest, ContainsCoversAndGapsAreHalfOpen) {
  RangeSet s;
  s.Add(0x1000, 0x2000);
  s.Add(0x3000, 0x4000);
  EXPECT_FALSE(s.Contains(0xfff));
  EXPECT_TRUE(s.Contains(0x1000));
  EXPECT_TRUE(s.Contains(0x1fff));
  EXPECT_FALSE(s.Contains(0x2000));
  EXPECT_TRUE(s.Covers(0x1000, 0x2000));
  EXPECT_FALSE(s.Covers(0x1000, 0x2001));
  EXPECT_FALSE(s.Covers(0x1800, 0x3800));  // spans a hole
  EXPECT_THAT(s.Gaps(0x0, 0x5000), ElementsAre(Pair(0x0, 0x1000), Pair(0x2000, 0x3000),
                                               Pair(0x4000, 0x5000)));
  EXPECT_THAT(s.Gaps(0x1800, 0x3800), ElementsAre(Pair(0x2000, 0x3000)));
  EXPECT_TRUE(s.Gaps(0x3000, 0x4000).empty());
}

TEST(RangeSetTest, IntersectKeepsCommonBytes) {
  RangeSet a, b;
  a.Add(0x0, 0x3000);
  a.Add(0x5000, 0x9000);
  b.Add(0x2000, 0x6000);
  b.Add(0x8000, 0xa000);
  EXPECT_THAT(Ranges(a.Intersect(b)), ElementsAre(Pair(0x2000, 0x3000), Pair(0x5000, 0x6000),
                                                  Pair(0x8000, 0x9000)));
}

// Against a bitmap model over a small universe: random Add/Subtract must
// leave exactly the modelled bytes, coalesced.
TEST(RangeSetTest, MatchesBitmapModel) {
  constexpr int kUniverse = 200;
  std::mt19937 rng(12345);
  for (int round = 0; round < 50; ++round) {
    RangeSet s;
    std::vector<bool> model(kUniverse, false);
    for (int op = 0; op < 40; ++op) {
      int a = rng() % kUniverse, b = rng() % (kUniverse + 1);
      bool add = rng() % 3 != 0;
      if (add) s.Add(a, b);
      else s.Subtract(a, b);
      for (int i = a; i < b; ++i) model[i] = add;
      uint64_t total = 0;
      for (int i = 0; i < kUniverse; ++i) {
        ASSERT_EQ(s.Contains(i), model[i]) << "round " << round << " op " << op << " at " << i;
        total += model[i];
      }
      ASSERT_EQ(s.TotalBytes(), total);
      uint64_t prev_end = 0;
      bool first = true;
      for (const auto& [st, en] : s) {
        ASSERT_LT(st, en);
        if (!first) {
          ASSERT_LT(prev_end, st) << "not coalesced";
        }
        prev_end = en;
        first = false;
      }
      // Gaps of the whole universe are exactly the complement.
      uint64_t gap_total = 0;
      for (const auto& [gs, ge] : s.Gaps(0, kUniverse)) {
        for (uint64_t i = gs; i < ge; ++i) ASSERT_FALSE(model[i]);
        gap_total += ge - gs;
      }
      ASSERT_EQ(gap_total + total, static_cast<uint64_t>(kUniverse));
    }
  }
}

}  // namespace
}  // namespace pageblame::regions

// IntervalIndex at its edges: half-open bounds, empty intervals, the order
// of answers, rebuilding. (index_test.cc checks random stabs.)
#include "processor/index/interval_index.h"

#include <cstdint>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pageblame::index {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<uint32_t> Stab(const IntervalIndex& idx, uint64_t x) {
  std::vector<uint32_t> out;
  idx.Stab(x, [&](uint32_t p) { out.push_back(p); });
  return out;
}

TEST(IntervalIndexTest, BoundsAreHalfOpen) {
  IntervalIndex idx;
  idx.Build({{0x1000, 0x3000, 1}, {0x3000, 0x4000, 2}});
  EXPECT_THAT(Stab(idx, 0xfff), IsEmpty());
  EXPECT_THAT(Stab(idx, 0x1000), ElementsAre(1));  // start is in
  EXPECT_THAT(Stab(idx, 0x2fff), ElementsAre(1));
  EXPECT_THAT(Stab(idx, 0x3000), ElementsAre(2));  // end is out: only the next one
  EXPECT_THAT(Stab(idx, 0x3fff), ElementsAre(2));
  EXPECT_THAT(Stab(idx, 0x4000), IsEmpty());
}

TEST(IntervalIndexTest, AnEmptyIndexAndEmptyIntervalsAnswerNothing) {
  IntervalIndex none;
  EXPECT_THAT(Stab(none, 0), IsEmpty());
  none.Build({});
  EXPECT_THAT(Stab(none, 5), IsEmpty());
  EXPECT_THAT(none.sorted(), IsEmpty());
  IntervalIndex empty_ones;
  empty_ones.Build({{0x2000, 0x2000, 1}, {0x1000, 0x3000, 2}, {0x2800, 0x2800, 3}});
  EXPECT_THAT(Stab(empty_ones, 0x2000), ElementsAre(2));
  EXPECT_THAT(Stab(empty_ones, 0x2800), ElementsAre(2));
}

TEST(IntervalIndexTest, AnswersComeInStartOrderThenPayloadOrder) {
  IntervalIndex idx;
  // Given out of order; equal starts with payloads out of order too.
  idx.Build({{0x5000, 0x9000, 4}, {0x1000, 0x9000, 9}, {0x1000, 0x9000, 3}, {0x3000, 0x6000, 7},
             {0x0, 0x9000, 8}});
  EXPECT_THAT(Stab(idx, 0x5800), ElementsAre(8, 3, 9, 7, 4));
  EXPECT_THAT(Stab(idx, 0x6000), ElementsAre(8, 3, 9, 4));  // 7 ended
  ASSERT_EQ(idx.sorted().size(), 5u);
  std::vector<uint32_t> order;
  for (const auto& iv : idx.sorted()) order.push_back(iv.payload);
  EXPECT_THAT(order, ElementsAre(8, 3, 9, 7, 4));
}

TEST(IntervalIndexTest, NestedIntervalsAndTheEndsOfTheAddressRange) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  IntervalIndex idx;
  idx.Build({{0, kMax, 1}, {0x1000, 0x2000, 2}, {0x1400, 0x1800, 3}, {kMax - 0x1000, kMax, 4}});
  EXPECT_THAT(Stab(idx, 0), ElementsAre(1));
  EXPECT_THAT(Stab(idx, 0x1500), ElementsAre(1, 2, 3));
  EXPECT_THAT(Stab(idx, 0x1800), ElementsAre(1, 2));
  EXPECT_THAT(Stab(idx, kMax - 1), ElementsAre(1, 4));
  EXPECT_THAT(Stab(idx, kMax), IsEmpty());  // no interval holds the last address: ends are exclusive
}

TEST(IntervalIndexTest, ASecondBuildReplacesTheFirst) {
  IntervalIndex idx;
  idx.Build({{0x1000, 0x2000, 1}, {0x1000, 0x5000, 2}, {0x3000, 0x9000, 3}});
  idx.Build({{0x1000, 0x1800, 5}});
  EXPECT_THAT(Stab(idx, 0x1000), ElementsAre(5));
  EXPECT_THAT(Stab(idx, 0x1800), IsEmpty());
  EXPECT_THAT(Stab(idx, 0x4000), IsEmpty());  // an old max end must not linger
  EXPECT_EQ(idx.sorted().size(), 1u);
}

}  // namespace
}  // namespace pageblame::index

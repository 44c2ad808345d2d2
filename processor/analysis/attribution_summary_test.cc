// What the renderers of an Attribution share, on a replayed history: the
// counts of SummarizeAttribution, a region's calls grouped by stack
// (RegionStacks) and the reservations apart (ReservedStacksOf).
#include "processor/analysis/attribution_summary.h"

#include <sys/mman.h>

#include <utility>

#include "gtest/gtest.h"
#include "processor/analysis/region_stacks.h"
#include "processor/analysis/four_stacks_history_for_test.h"
#include "processor/analysis/reserved_stacks.h"

namespace pageblame::analysis {
namespace {

class AttributionSummaryTest : public FourStacksHistoryTest {
 protected:
  void SetUp() override {
    ReplayFourStacks();
    // [A, A + 16P): S1's two calls (8P), S3's (6P), 2P never mapped.
    std::vector<regions::Region> regions;
    for (auto [start, len] : {std::pair{A, 16 * P}, {B, 16 * P}, {D, 2 * P}, {E, 4 * P}}) {
      regions.emplace_back();
      regions.back().start = start;
      regions.back().end = start + len;
    }
    absl::StatusOr<Attribution> a = Attribute(idx_, regions, AttributeOptions());
    ASSERT_TRUE(a.ok()) << a.status();
    a_ = *std::move(a);
    // Ranked by committed bytes: S1 8P, S3 6P, S2 2P (of 16P), S4 0.
    ASSERT_EQ(a_.stacks.size(), 4u);
    ASSERT_EQ(a_.stacks[0].stack, kS1);
    ASSERT_EQ(a_.stacks[1].stack, kS3);
    ASSERT_EQ(a_.stacks[2].stack, kS2);
    ASSERT_EQ(a_.stacks[3].stack, kS4);
  }
  Attribution a_;
};

TEST_F(AttributionSummaryTest, CountsCallsStacksAndRegions) {
  const AttributionSummary s = SummarizeAttribution(a_);
  EXPECT_EQ(s.calls, 5u);               // S1's two, S3's, S2's mmap, S4's
  EXPECT_EQ(s.committed_stacks, 3u);    // not S4 (PROT_NONE only)
  EXPECT_EQ(s.committed_regions, 2u);   // [A..) and [B..); not D (before the trace) nor E
  EXPECT_EQ(s.before_trace_regions, 1u);
  EXPECT_EQ(s.unmapped_regions, 1u);
  EXPECT_FALSE(s.stacks_rss.has_value());  // no snapshot read anything
}

TEST_F(AttributionSummaryTest, RegionStacksGroupsARegionsCallsByStackMostBytesFirst) {
  const std::vector<std::vector<RegionStack>> by_region = RegionStacks(idx_, a_);
  ASSERT_EQ(by_region.size(), 4u);
  // The region's biggest call is S3's (6P), but S1's two calls (4P each) make 8P.
  ASSERT_EQ(a_.regions[0].calls.size(), 3u);
  EXPECT_EQ(idx_.event(a_.regions[0].calls[0].call).stack, kS3);
  ASSERT_EQ(by_region[0].size(), 2u);
  EXPECT_EQ(by_region[0][0].rank, 1u);
  EXPECT_EQ(by_region[0][0].bytes, 8 * P);
  EXPECT_EQ(by_region[0][0].calls, 2u);
  EXPECT_EQ(idx_.event(by_region[0][0].first).time, 11u);  // the call at 10 (its exit's time)
  EXPECT_EQ(by_region[0][1].rank, 2u);
  EXPECT_EQ(by_region[0][1].bytes, 6 * P);
  EXPECT_EQ(by_region[0][1].calls, 1u);
  ASSERT_EQ(by_region[1].size(), 1u);
  EXPECT_EQ(by_region[1][0].rank, 3u);
  EXPECT_EQ(by_region[1][0].bytes, 16 * P);
  EXPECT_TRUE(by_region[2].empty());  // all from before the trace
  ASSERT_EQ(by_region[3].size(), 1u);
  EXPECT_EQ(by_region[3][0].rank, 4u);
}

TEST_F(AttributionSummaryTest, ReservedStacksAreTheUncommittedBytesMostFirst) {
  const ReservedStacks r = ReservedStacksOf(a_);
  ASSERT_EQ(r.stacks.size(), 2u);
  EXPECT_EQ(r.stacks[0].stack, 2u);  // S2: 14P still PROT_NONE
  EXPECT_EQ(r.stacks[0].bytes, static_cast<int64_t>(14 * P));
  EXPECT_EQ(r.stacks[1].stack, 3u);  // S4: 4P
  EXPECT_EQ(r.stacks[1].bytes, static_cast<int64_t>(4 * P));
  EXPECT_EQ(r.bytes, static_cast<int64_t>(18 * P));
}

}  // namespace
}  // namespace pageblame::analysis

// What the renderers of a Growth share, on a replayed history: the table's
// count and total (SummarizeGrowth) and the reservations' change apart
// (ReservedStacksOf).
#include "processor/analysis/growth_summary.h"

#include <sys/mman.h>

#include "gtest/gtest.h"
#include "processor/analysis/four_stacks_history_for_test.h"
#include "processor/analysis/reserved_stacks.h"

namespace pageblame::analysis {
namespace {

// The history's last four calls (40 on) are the growth from 25 to the end.
class GrowthSummaryTest : public FourStacksHistoryTest {
 protected:
  void SetUp() override {
    ReplayFourStacks();
    ASSERT_EQ(idx_.process(0).pid, 1u);
    GrowthOptions o;
    o.processes = {0};
    o.from = 25;
    absl::StatusOr<Growth> g = ComputeGrowth(idx_, o);
    ASSERT_TRUE(g.ok()) << g.status();
    g_ = *std::move(g);
    ASSERT_EQ(g_.stacks.size(), 4u);
  }
  // g_.stacks' index of `stack`.
  size_t IndexOf(StackId stack) const {
    for (size_t i = 0; i < g_.stacks.size(); ++i) {
      if (g_.stacks[i].stack == stack) return i;
    }
    ADD_FAILURE() << "no such stack";
    return g_.stacks.size();
  }
  Growth g_;
};

TEST_F(GrowthSummaryTest, CountsStacksWithCommittedBytesAtEitherEnd) {
  const GrowthSummary s = SummarizeGrowth(g_);
  EXPECT_EQ(s.committed_stacks, 3u);  // S1, S3, S2; not S4 (PROT_NONE only)
  EXPECT_EQ(s.committed_calls, 4u);   // S1's two, S3's, S2's mmap
}

TEST_F(GrowthSummaryTest, StacksPartIsTheTotalWithoutBeforeTheTrace) {
  const GrowthSummary s = SummarizeGrowth(g_);
  EXPECT_EQ(s.stacks_from.mapped, 20 * P);  // A's first 4P, B
  EXPECT_EQ(s.stacks_from.committed, 4 * P);
  EXPECT_EQ(s.stacks_to.mapped, 34 * P);     // 8P + 6P + 16P + 4P
  EXPECT_EQ(s.stacks_to.committed, 16 * P);  // 8P + 6P + 2P
  uint32_t from_regions = 0, to_regions = 0;
  for (const StackGrowth& st : g_.stacks) {
    from_regions += st.from.regions;
    to_regions += st.to.regions;
  }
  EXPECT_EQ(s.stacks_from.regions, from_regions);
  EXPECT_EQ(s.stacks_to.regions, to_regions);
  EXPECT_FALSE(s.stacks_from.rss.has_value());  // no snapshot
  EXPECT_FALSE(s.stacks_to.rss.has_value());
}

TEST_F(GrowthSummaryTest, ReservedStacksAreTheChangeOfUncommittedBytesMostFirst) {
  const ReservedStacks r = ReservedStacksOf(g_);
  ASSERT_EQ(r.stacks.size(), 2u);
  EXPECT_EQ(r.stacks[0].stack, IndexOf(kS4));  // +4P reserved
  EXPECT_EQ(r.stacks[0].bytes, static_cast<int64_t>(4 * P));
  EXPECT_EQ(r.stacks[1].stack, IndexOf(kS2));  // 2P of its reservation committed
  EXPECT_EQ(r.stacks[1].bytes, -static_cast<int64_t>(2 * P));
  EXPECT_EQ(r.bytes, static_cast<int64_t>(2 * P));
}

}  // namespace
}  // namespace pageblame::analysis

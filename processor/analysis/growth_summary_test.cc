// What the renderers of a Growth share, on a replayed history: the table's
// count and total (SummarizeGrowth) and the reservations' change apart
// (ReservedStacksOf).
#include "processor/analysis/growth_summary.h"

#include <sys/mman.h>

#include "gtest/gtest.h"
#include "processor/analysis/replayed_index_for_test.h"
#include "processor/analysis/reserved_stacks.h"

namespace pageblame::analysis {
namespace {

using decode::Syscall;

constexpr uint64_t P = 4096, A = 0x300000000000, B = 0x300010000000, E = 0x300030000000, D = 0x400000;
const StackId kS1(1), kS2(2), kS3(3), kS4(4);

class GrowthSummaryTest : public ReplayedIndexTest {
 protected:
  void SetUp() override {
    Mmap2(5, D, 2 * P, 0, PROT_READ | PROT_EXEC, "/bin/prog");  // before the trace
    const uint64_t anon = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, rw = PROT_READ | PROT_WRITE;
    Call(10, Syscall::kMmap, {A, 4 * P, rw, anon, ~0ull, 0}, A, kS1);
    Call(20, Syscall::kMmap, {B, 16 * P, PROT_NONE, anon, ~0ull, 0}, B, kS2);
    // From here (25) to the end.
    Call(40, Syscall::kMmap, {A + 4 * P, 4 * P, rw, anon, ~0ull, 0}, A + 4 * P, kS1);
    Call(45, Syscall::kMmap, {A + 8 * P, 6 * P, rw, anon, ~0ull, 0}, A + 8 * P, kS3);
    Call(50, Syscall::kMprotect, {B, 2 * P, rw}, 0, kS2);
    Call(60, Syscall::kMmap, {E, 4 * P, PROT_NONE, anon, ~0ull, 0}, E, kS4);
    Done();
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

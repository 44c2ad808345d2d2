// LiveStacks: one row per creating stack (and one for what existed before
// the trace), in the order of their first region, summing mapped and
// committed bytes of exactly the regions given.
#include "processor/analysis/live_stacks.h"

#include <sys/mman.h>

#include "gtest/gtest.h"
#include "processor/analysis/replayed_index_for_test.h"

namespace pageblame::analysis {
namespace {

using decode::Syscall;

constexpr uint64_t P = 4096, A = 0x300000000000, B = 0x300010000000, C = 0x300020000000, D = 0x400000;
const StackId kS1(1), kS2(2);

class LiveStacksTest : public ReplayedIndexTest {
 protected:
  void SetUp() override {
    Mmap2(5, D, 2 * P, 0, PROT_READ | PROT_EXEC, "/bin/prog");  // before the trace
    const uint64_t anon = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED;
    Call(10, Syscall::kMmap, {A, 4 * P, PROT_READ | PROT_WRITE, anon, ~0ull, 0}, A, kS1);
    Call(20, Syscall::kMmap, {B, 16 * P, PROT_NONE, anon, ~0ull, 0}, B, kS2);
    Call(30, Syscall::kMmap, {C, 2 * P, PROT_READ | PROT_WRITE, anon, ~0ull, 0}, C, kS1);
    Call(50, Syscall::kMprotect, {B, 2 * P, PROT_READ | PROT_WRITE}, 0, kS2);
    Done();
  }
};

TEST_F(LiveStacksTest, OneRowPerCreatingStackInTheOrderOfItsFirstRegion) {
  const std::vector<VersionId> alive = idx_.RegionsAt(0, index::kEndOfTrace);
  const std::vector<LiveStack> live = LiveStacks(idx_, alive);
  ASSERT_EQ(live.size(), 3u);
  // D (before the trace) < A (S1) < B (S2): C joins A's row.
  EXPECT_FALSE(live[0].first_call.valid());
  EXPECT_EQ(live[0].bytes, 2 * P);
  EXPECT_EQ(live[0].committed, 2 * P);
  ASSERT_TRUE(live[1].first_call.valid());
  EXPECT_EQ(idx_.event(live[1].first_call).stack, kS1);
  EXPECT_EQ(idx_.event(live[1].first_call).time, 11u);  // the call at 10 (its exit's time)
  EXPECT_EQ(live[1].bytes, 6 * P);
  EXPECT_EQ(live[1].committed, 6 * P);
  EXPECT_EQ(idx_.event(live[2].first_call).stack, kS2);
  EXPECT_EQ(live[2].bytes, 16 * P);
  EXPECT_EQ(live[2].committed, 2 * P);  // the rest is still PROT_NONE
}

TEST_F(LiveStacksTest, OnlyTheRegionsGivenCount) {
  const std::vector<LiveStack> live = LiveStacks(idx_, idx_.RegionsAt(0, 25));
  ASSERT_EQ(live.size(), 3u);  // C is not made yet
  EXPECT_EQ(live[1].bytes, 4 * P);
  EXPECT_EQ(live[2].committed, 0u);
  EXPECT_TRUE(LiveStacks(idx_, {}).empty());
}

}  // namespace
}  // namespace pageblame::analysis

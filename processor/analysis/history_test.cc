// Page lineage vs address history, on the helper-found repro: page A lives at
// X and is unmapped; page B is created at Y and moved onto X. The page at X
// is B: its history is B's (created at Y, moved to X), not A's.
#include "processor/analysis/history.h"

#include <sys/mman.h>

#include "gtest/gtest.h"
#include "processor/analysis/replayed_index_for_test.h"

namespace pageblame::analysis {
namespace {

using decode::Syscall;

constexpr uint64_t X = 0x300010000000, Y = 0x300011000000, P = 4096;

class HistoryTest : public ReplayedIndexTest {
 protected:
  void SetUp() override {
    const uint64_t anon = MAP_PRIVATE | MAP_ANONYMOUS;
    Call(10, Syscall::kMmap, {X, 2 * P, PROT_READ, anon | MAP_FIXED, ~0ull, 0}, X);  // A
    Call(20, Syscall::kMunmap, {X, 2 * P}, 0);
    Call(30, Syscall::kMmap, {Y, 2 * P, PROT_READ, anon | MAP_FIXED, ~0ull, 0}, Y);  // B
    Call(40, Syscall::kMremap, {Y, 2 * P, 2 * P, MREMAP_MAYMOVE | MREMAP_FIXED, X}, X);
    Call(50, Syscall::kMunmap, {X, P}, 0);  // B's first page goes; X + P stays
    Done();
  }
};

TEST_F(HistoryTest, LineageFollowsThePageNotTheAddress) {
  EXPECT_EQ(Changes(PageLineage(idx_, 0, X + P, index::kEndOfTrace)),
            (std::vector<std::string>{"created@31", "moved_in@41", "split@51"}));
  // At time 25 the page at X+P was A's, already unmapped.
  EXPECT_EQ(Changes(PageLineage(idx_, 0, X + P, 25)),
            (std::vector<std::string>{"created@11", "unmapped@21"}));
  // The unmapped first page at the end: B's, moved here, then unmapped.
  EXPECT_EQ(Changes(PageLineage(idx_, 0, X, index::kEndOfTrace)),
            (std::vector<std::string>{"created@31", "moved_in@41", "unmapped@51"}));
}

TEST_F(HistoryTest, AddressHistoryHasEveryTenant) {
  std::vector<std::string> all = Changes(PageHistory(idx_, 0, X + P));
  EXPECT_EQ(all.front(), "created@11");  // A
  EXPECT_NE(std::find(all.begin(), all.end(), "unmapped@21"), all.end());
  EXPECT_NE(std::find(all.begin(), all.end(), "moved_in@41"), all.end());
}

}  // namespace
}  // namespace pageblame::analysis

// ProcessPids: the pids of process entries in their order, a pid once for
// consecutive entries of it.
#include "processor/analysis/process_pids.h"

#include <sys/mman.h>

#include <vector>

#include "gtest/gtest.h"
#include "processor/analysis/replayed_index_for_test.h"

namespace pageblame::analysis {
namespace {

using decode::Syscall;
using Pids = std::vector<uint32_t>;

constexpr uint64_t P = 4096, A = 0x300000000000;

class ProcessPidsTest : public ReplayedIndexTest {
 protected:
  void SetUp() override {
    const uint64_t anon = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, rw = PROT_READ | PROT_WRITE;
    Call(10, Syscall::kMmap, {A, 4 * P, rw, anon, ~0ull, 0}, A);
    // A second process: pid 2's call.
    auto [in, out] = replay::CallEvents(20, 2, 2, Syscall::kMmap, {A, 4 * P, rw, anon, ~0ull, 0}, A, StackId());
    replayer_.Apply(in);
    replayer_.Apply(out);
    Done();
    ASSERT_EQ(idx_.ProcessesWithPid(1).size(), 1u);
    ASSERT_EQ(idx_.ProcessesWithPid(2).size(), 1u);
    one_ = idx_.ProcessesWithPid(1)[0];
    two_ = idx_.ProcessesWithPid(2)[0];
  }
  uint32_t one_ = 0, two_ = 0;
};

TEST_F(ProcessPidsTest, PidsInTheEntriesOrder) {
  EXPECT_EQ(ProcessPids(idx_, {two_, one_}), (Pids{2, 1}));
  EXPECT_TRUE(ProcessPids(idx_, {}).empty());
}

TEST_F(ProcessPidsTest, ConsecutiveEntriesOfAPidGiveItOnce) {
  EXPECT_EQ(ProcessPids(idx_, {one_, one_, two_, one_}), (Pids{1, 2, 1}));
}

}  // namespace
}  // namespace pageblame::analysis

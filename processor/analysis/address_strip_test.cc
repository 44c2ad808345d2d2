// AddressStrip: one element per region up to its limit; past it, runs of
// adjacent regions alike (one creating stack, prot, label and kind) that
// still hold every region and byte; each with its first page's lineage.
#include "processor/analysis/address_strip.h"

#include <sys/mman.h>

#include "gtest/gtest.h"
#include "processor/analysis/replayed_index_for_test.h"

namespace pageblame::analysis {
namespace {

using decode::Syscall;

constexpr uint64_t P = 4096, A = 0x300000000000;
const StackId kS1(1), kS2(2);

RegionKind Anon(const index::Version&) { return RegionKind::kAnon; }

class AddressStripTest : public ReplayedIndexTest {
 protected:
  void SetUp() override {
    const uint64_t anon = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, rw = PROT_READ | PROT_WRITE;
    // Three neighbours by S1, then one by S2, then one by S1 with another prot.
    Call(10, Syscall::kMmap, {A, P, rw, anon, ~0ull, 0}, A, kS1);
    Call(20, Syscall::kMmap, {A + P, 2 * P, rw, anon, ~0ull, 0}, A + P, kS1);
    Call(30, Syscall::kMmap, {A + 3 * P, P, rw, anon, ~0ull, 0}, A + 3 * P, kS1);
    Call(40, Syscall::kMmap, {A + 4 * P, P, rw, anon, ~0ull, 0}, A + 4 * P, kS2);
    Call(50, Syscall::kMmap, {A + 5 * P, P, PROT_READ, anon, ~0ull, 0}, A + 5 * P, kS1);
    Call(60, Syscall::kMunmap, {A + P, P}, 0);  // splits the second: A+2P stays
    Done();
    alive_ = idx_.RegionsAt(0, index::kEndOfTrace);
  }
  std::vector<VersionId> alive_;
};

TEST_F(AddressStripTest, EveryRegionIsAnElementUpToTheLimit) {
  const std::vector<StripRun> strip = AddressStrip(idx_, 0, index::kEndOfTrace, alive_, nullptr, nullptr, Anon, 100);
  ASSERT_EQ(strip.size(), alive_.size());
  for (size_t i = 0; i < strip.size(); ++i) {
    const index::Version& v = idx_.version(alive_[i]);
    EXPECT_EQ(strip[i].first, i);
    EXPECT_EQ(strip[i].count, 1u);
    EXPECT_EQ(strip[i].end, v.end);
    EXPECT_EQ(strip[i].label, "[anon]");
    EXPECT_FALSE(strip[i].rss.has_value());  // no snapshot
    EXPECT_EQ(Changes(strip[i].lineage), Changes(PageLineage(idx_, 0, v.start, index::kEndOfTrace)));
  }
  // The split one's page was made at 20 and split by the munmap.
  EXPECT_EQ(Changes(strip[1].lineage), (std::vector<std::string>{"created@21", "split@61"}));
}

TEST_F(AddressStripTest, PastTheLimitAlikeNeighboursAreOneRun) {
  const std::vector<StripRun> strip = AddressStrip(idx_, 0, index::kEndOfTrace, alive_, nullptr, nullptr, Anon, 2);
  // [A, A+P) alone (a hole follows); A+2P..A+4P by S1; A+4P by S2; A+5P read-only.
  ASSERT_EQ(strip.size(), 4u);
  EXPECT_EQ(strip[1].count, 2u);
  EXPECT_EQ(strip[1].end, A + 4 * P);
  EXPECT_EQ(strip[1].bytes, 2 * P);
  EXPECT_EQ(strip[3].prot, "r--");
  uint64_t bytes = 0, count = 0;
  for (const StripRun& r : strip) {
    bytes += r.bytes;
    count += r.count;
  }
  EXPECT_EQ(count, alive_.size());
  EXPECT_EQ(bytes, 5 * P);
}

}  // namespace
}  // namespace pageblame::analysis

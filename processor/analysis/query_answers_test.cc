// Query(): the answers of `pageblame query` carry the page's lineage, made
// once, for the mapped page, the page gone by the time asked, and none for
// an address nobody had. Page B is created at Y, moved onto X, and its
// first page unmapped.
#include "processor/analysis/query_answers.h"

#include <sys/mman.h>

#include "gtest/gtest.h"
#include "processor/analysis/replayed_index_for_test.h"

namespace pageblame::analysis {
namespace {

using decode::Syscall;

constexpr uint64_t X = 0x300010000000, Y = 0x300011000000, P = 4096, kNowhere = 0x500000000000;

class QueryAnswersTest : public ReplayedIndexTest {
 protected:
  void SetUp() override {
    const uint64_t anon = MAP_PRIVATE | MAP_ANONYMOUS;
    Call(30, Syscall::kMmap, {Y, 2 * P, PROT_READ, anon | MAP_FIXED, ~0ull, 0}, Y);
    Call(40, Syscall::kMremap, {Y, 2 * P, 2 * P, MREMAP_MAYMOVE | MREMAP_FIXED, X}, X);
    Call(50, Syscall::kMunmap, {X, P}, 0);
    Done();
  }
  std::vector<QueryAnswer> Ask(std::vector<uint64_t> addresses, uint64_t at) {
    QueryOptions o;
    o.addresses = std::move(addresses);
    for (uint32_t p = 0; p < idx_.num_processes(); ++p) o.processes.push_back(p);
    o.at = at;
    return Query(idx_, o);
  }
};

TEST_F(QueryAnswersTest, EachAnswerHasItsPagesLineageAsPageLineageGivesIt) {
  const std::vector<QueryAnswer> a = Ask({X + P, X, kNowhere}, index::kEndOfTrace);
  ASSERT_EQ(a.size(), 3u);
  // Mapped at the end: the version there, and how the page came to be.
  ASSERT_TRUE(a[0].process.has_value());
  EXPECT_TRUE(a[0].version.valid());
  EXPECT_EQ(Changes(a[0].lineage), (std::vector<std::string>{"created@31", "moved_in@41", "split@51"}));
  // Gone by the end: its last tenant, no version, and the lineage ends in
  // the unmap that the answer prints as how the page went.
  ASSERT_TRUE(a[1].process.has_value());
  EXPECT_FALSE(a[1].version.valid());
  EXPECT_EQ(Changes(a[1].lineage), (std::vector<std::string>{"created@31", "moved_in@41", "unmapped@51"}));
  EXPECT_EQ(Changes(a[1].lineage), Changes(PageLineage(idx_, *a[1].process, X, index::kEndOfTrace)));
  EXPECT_FALSE(a[1].unknown_break.valid());  // no brk of an attached process
  // Nobody ever had it: no process, no lineage.
  EXPECT_FALSE(a[2].process.has_value());
  EXPECT_TRUE(a[2].lineage.empty());
}

TEST_F(QueryAnswersTest, TheLineageStopsAtTheTimeAsked) {
  const std::vector<QueryAnswer> a = Ask({X}, 45);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_TRUE(a[0].version.valid());
  EXPECT_EQ(Changes(a[0].lineage), (std::vector<std::string>{"created@31", "moved_in@41"}));
}

}  // namespace
}  // namespace pageblame::analysis

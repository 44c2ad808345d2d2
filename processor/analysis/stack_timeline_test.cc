// ComputeStackTimeline on a small replayed history: the totals at every
// boundary are those of RegionsAt there, each stack's steps add up to its
// own versions alive at each boundary, and stacks rank by committed bytes
// before mapped ones (a big reservation does not outrank).
#include "processor/analysis/stack_timeline.h"

#include <sys/mman.h>

#include "gtest/gtest.h"
#include "processor/index/committed.h"
#include "processor/analysis/replayed_index_for_test.h"

namespace pageblame::analysis {
namespace {

using decode::Syscall;

constexpr uint64_t P = 4096, A = 0x300000000000, B = 0x300010000000, C = 0x300020000000;
const StackId kS1(1), kS2(2);

// Reservations are reservations, everything else anon: says which version
// a series took its kind from.
RegionKind KindByAccess(const index::Version& v) {
  return index::IsCommitted(v) ? RegionKind::kAnon : RegionKind::kReservation;
}

class StackTimelineTest : public ReplayedIndexTest {
 protected:
  void SetUp() override {
    const uint64_t anon = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED;
    Call(10, Syscall::kMmap, {A, 4 * P, PROT_READ | PROT_WRITE, anon, ~0ull, 0}, A, kS1);
    Call(20, Syscall::kMmap, {B, 16 * P, PROT_NONE, anon, ~0ull, 0}, B, kS2);
    Call(30, Syscall::kMmap, {C, 2 * P, PROT_READ | PROT_WRITE, anon, ~0ull, 0}, C, kS1);
    Call(40, Syscall::kMunmap, {A, 4 * P}, 0);
    Call(50, Syscall::kMprotect, {B, 2 * P, PROT_READ | PROT_WRITE}, 0, kS2);
    Done();
  }
  // Mapped and committed bytes of the versions alive at t (made by
  // `stack`, or by any call when invalid).
  std::pair<uint64_t, uint64_t> AliveAt(uint64_t t, StackId stack = StackId::Invalid()) {
    std::pair<uint64_t, uint64_t> sum{0, 0};
    for (VersionId id : idx_.RegionsAt(0, t)) {
      const index::Version& v = idx_.version(id);
      if (stack.valid() && (!v.origin.valid() || idx_.event(v.origin).stack != stack)) continue;
      sum.first += v.end - v.start;
      if (index::IsCommitted(v)) sum.second += v.end - v.start;
    }
    return sum;
  }
  // A series' value at boundary k, from its steps.
  static uint64_t ValueAt(const std::vector<TimelineStep>& steps, size_t k) {
    uint64_t v = 0;
    for (const TimelineStep& s : steps) {
      if (s.k <= k) v = s.bytes;
    }
    return v;
  }
};

TEST_F(StackTimelineTest, TotalsAtEachBoundaryAreTheRegionsAliveThere) {
  for (size_t buckets : {1, 3, 7, 100}) {
    const StackTimeline t = ComputeStackTimeline(idx_, 0, buckets, 10, KindByAccess);
    ASSERT_EQ(t.boundaries.size(), buckets + 1);
    EXPECT_EQ(t.boundaries.back(), index::kEndOfTrace);
    ASSERT_EQ(t.mapped.size(), t.boundaries.size());
    for (size_t k = 0; k < t.boundaries.size(); ++k) {
      EXPECT_EQ(std::make_pair(t.mapped[k], t.committed[k]), AliveAt(t.boundaries[k])) << buckets << " " << k;
    }
  }
}

TEST_F(StackTimelineTest, EachSeriesIsItsStacksBytesAndCommittedBytesRankFirst) {
  const StackTimeline t = ComputeStackTimeline(idx_, 0, 50, 10, KindByAccess);
  ASSERT_EQ(t.stacks.size(), 2u);
  // S1 committed 6 pages at most, S2 2 (of 16 mapped): S1 first.
  EXPECT_EQ(idx_.event(t.stacks[0].first_call).stack, kS1);
  EXPECT_EQ(idx_.event(t.stacks[0].first_call).time, 11u);  // its earliest call (at 10, exiting at 11)
  EXPECT_EQ(t.stacks[0].max_committed, 6 * P);
  EXPECT_EQ(t.stacks[1].max_mapped, 16 * P);
  EXPECT_EQ(t.stacks[1].max_committed, 2 * P);
  for (const StackSeries& s : t.stacks) {
    const StackId stack = idx_.event(s.first_call).stack;
    for (size_t k = 0; k < t.boundaries.size(); ++k) {
      const auto [mapped, committed] = AliveAt(t.boundaries[k], stack);
      EXPECT_EQ(ValueAt(s.mapped, k), mapped) << k;
      EXPECT_EQ(ValueAt(s.committed, k), committed) << k;
    }
  }
  // S2's kind is its largest committed version's, not its bigger reservation's.
  EXPECT_EQ(t.stacks[1].kind, RegionKind::kAnon);
  // Nothing from before the trace.
  EXPECT_FALSE(t.before_trace.kind.has_value());
  EXPECT_TRUE(t.before_trace.mapped.empty());
  // Only the top one kept.
  const StackTimeline top = ComputeStackTimeline(idx_, 0, 50, 1, KindByAccess);
  ASSERT_EQ(top.stacks.size(), 1u);
  EXPECT_EQ(idx_.event(top.stacks[0].first_call).stack, kS1);
}

}  // namespace
}  // namespace pageblame::analysis

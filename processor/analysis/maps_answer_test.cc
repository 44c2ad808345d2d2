// Maps() and RegionRuns(): each process's regions alive at the moment, of
// the kinds asked, with the bytes made during and before the trace; text
// rows merge what the kernel would merge and name the call that made the
// most of a row.
#include "processor/analysis/maps_answer.h"

#include <sys/mman.h>

#include "gtest/gtest.h"
#include "processor/analysis/replayed_index_for_test.h"

namespace pageblame::analysis {
namespace {

using decode::Syscall;

constexpr uint64_t P = 4096, A = 0x300000000000, D = 0x400000;
const StackId kS1(1), kS2(2);

// Executable memory is an image, the rest anon.
RegionKind ByExec(const index::Version& v) {
  return (v.attrs.prot & PROT_EXEC) ? RegionKind::kImage : RegionKind::kAnon;
}

class MapsAnswerTest : public ReplayedIndexTest {
 protected:
  void SetUp() override {
    Mmap2(5, D, 2 * P, 0, PROT_READ | PROT_EXEC, "/bin/prog");  // before the trace
    const uint64_t anon = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, rw = PROT_READ | PROT_WRITE;
    Call(10, Syscall::kMmap, {A, P, rw, anon, ~0ull, 0}, A, kS1);
    Call(20, Syscall::kMmap, {A + P, 3 * P, rw, anon, ~0ull, 0}, A + P, kS1);
    Call(30, Syscall::kMmap, {A + 4 * P, P, rw, anon, ~0ull, 0}, A + 4 * P, kS2);
    Done();
  }
  MapsAnswer Ask(std::vector<RegionKind> kinds, bool split) {
    MapsQuery q;
    q.processes = {0};
    q.kind_of = ByExec;
    q.kinds = std::move(kinds);
    q.runs = true;
    q.split = split;
    return Maps(idx_, q);
  }
};

TEST_F(MapsAnswerTest, TheRegionsAliveOfTheKindsAsked) {
  const MapsAnswer all = Ask({}, false);
  ASSERT_EQ(all.processes.size(), 1u);
  const ProcessMaps& p = all.processes[0];
  EXPECT_EQ(p.regions.size(), idx_.RegionsAt(0, index::kEndOfTrace).size());
  EXPECT_EQ(p.regions[0].kind, RegionKind::kImage);
  EXPECT_EQ(p.before_trace_bytes, 2 * P);
  EXPECT_EQ(p.created_bytes, 5 * P);
  EXPECT_FALSE(all.snapshots);
  EXPECT_FALSE(p.rss.has_value());
  const MapsAnswer anon = Ask({RegionKind::kAnon}, false);
  EXPECT_EQ(anon.processes[0].regions.size(), p.regions.size() - 1);
  EXPECT_EQ(anon.processes[0].before_trace_bytes, 0u);
}

TEST_F(MapsAnswerTest, RowsMergeOneStacksNeighboursAndNameItsBiggestCall) {
  const std::vector<RegionRun>& runs = Ask({}, false).processes[0].runs;
  // /bin/prog; A..A+4P by S1's two calls; A+4P by S2.
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_FALSE(runs[0].origin.top.valid());
  EXPECT_EQ(runs[1].count, 2u);
  EXPECT_EQ(runs[1].start, A);
  EXPECT_EQ(runs[1].end, A + 4 * P);
  EXPECT_EQ(runs[1].origin.calls, 2u);
  EXPECT_EQ(runs[1].origin.stacks, 1u);
  EXPECT_EQ(idx_.event(runs[1].origin.top).time, 21u);  // the call at 20: 3 pages against 1
  EXPECT_EQ(runs[1].kind, RegionKind::kAnon);
  EXPECT_EQ(runs[1].commit.calls, 0u);
  EXPECT_EQ(Ask({}, true).processes[0].runs.size(), 4u);  // --split: one per version
}

}  // namespace
}  // namespace pageblame::analysis

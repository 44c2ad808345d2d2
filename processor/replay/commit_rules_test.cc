// The reserve/commit rules (mprotect, pkey_mprotect, madvise, and MAP_FIXED
// anonymous mappings over anonymous memory), one test each, through the real
// Replayer with hand-built events. Real recordings of the same patterns are
// checked in tests/commit_test.cc.
#include <sys/mman.h>

#include <cerrno>
#include <vector>

#include "gtest/gtest.h"
#include "processor/replay/call_events_for_test.h"
#include "processor/replay/replayer.h"

namespace pageblame::replay {
namespace {

using decode::Syscall;
using index::Begin;
using index::End;
using index::kEndOfTrace;

constexpr uint64_t P = 4096;
constexpr uint64_t kAnon = MAP_PRIVATE | MAP_ANONYMOUS;
constexpr uint64_t kRW = PROT_READ | PROT_WRITE;
constexpr uint64_t kBase = 0x100000;

class CommitRulesTest : public ::testing::Test {
 protected:
  CommitRulesTest() : replayer_(&idx_, nullptr) {}

  // A call by pid 1 whose stack is tagged `tag`: its enter at t, exit at t+1.
  void Call(uint64_t t, Syscall sc, std::vector<uint64_t> args, int64_t ret, uint32_t tag) {
    std::vector<uint64_t> ips = {0x1000 + tag};
    auto [in, out] = CallEvents(t, 1, 1, sc, args, ret, idx_.stacks().Intern(ips));
    replayer_.Apply(in);
    replayer_.Apply(out);
  }
  void Mmap(uint64_t t, uint64_t addr, uint64_t len, uint64_t prot, uint64_t flags, uint32_t tag) {
    Call(t, Syscall::kMmap, {addr, len, prot, flags, ~0ull, 0}, static_cast<int64_t>(addr), tag);
  }
  void Mprotect(uint64_t t, uint64_t addr, uint64_t len, uint64_t prot, uint32_t tag,
                int64_t ret = 0) {
    Call(t, Syscall::kMprotect, {addr, len, prot}, ret, tag);
  }
  void Done() {
    replayer_.Finish();
    idx_.Finalize();
  }
  const index::Version& At(uint64_t addr, uint64_t t = kEndOfTrace) {
    VersionId v = idx_.Lookup(idx_.ProcessesWithPid(1).at(0), addr, t);
    EXPECT_TRUE(v.valid()) << std::hex << addr;
    static index::Version none;
    return v.valid() ? idx_.version(v) : none;
  }
  // The tag of the stack of a call (0 for none).
  uint32_t Tag(EventId ev) {
    if (!ev.valid()) return 0;
    return static_cast<uint32_t>(idx_.stacks().Ips(idx_.event(ev).stack)[0] - 0x1000);
  }
  uint32_t OriginTag(uint64_t addr) { return Tag(At(addr).origin); }
  uint32_t CommitTag(uint64_t addr) { return Tag(At(addr).commit); }
  std::vector<std::pair<uint64_t, uint64_t>> Live() {
    std::vector<std::pair<uint64_t, uint64_t>> out;
    for (VersionId v : idx_.RegionsAt(idx_.ProcessesWithPid(1).at(0), kEndOfTrace)) {
      out.emplace_back(idx_.version(v).start, idx_.version(v).end);
    }
    return out;
  }

  index::TraceIndex idx_;
  Replayer replayer_;
};

using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;

TEST_F(CommitRulesTest, MprotectCommitsPiecesOfAReservationAndSplitsLikeTheKernel) {
  Mmap(10, kBase, 16 * P, PROT_NONE, kAnon | MAP_NORESERVE, 1);  // reserve
  Mprotect(20, kBase + 2 * P, 2 * P, kRW, 2);                    // commit gen0
  Mprotect(30, kBase + 4 * P, 4 * P, kRW, 3);                    // commit next to it
  Done();
  EXPECT_EQ(Live(), (Ranges{{kBase, kBase + 2 * P},
                            {kBase + 2 * P, kBase + 4 * P},
                            {kBase + 4 * P, kBase + 8 * P},
                            {kBase + 8 * P, kBase + 16 * P}}));
  for (uint64_t page = 0; page < 16; ++page) EXPECT_EQ(OriginTag(kBase + page * P), 1u) << page;
  EXPECT_EQ(CommitTag(kBase), 0u);
  EXPECT_EQ(CommitTag(kBase + 3 * P), 2u);
  EXPECT_EQ(CommitTag(kBase + 7 * P), 3u);
  EXPECT_EQ(CommitTag(kBase + 8 * P), 0u);
  EXPECT_EQ(At(kBase + 3 * P).attrs.prot, kRW);
  EXPECT_EQ(At(kBase + 3 * P).begin, Begin::kCommitted);
  EXPECT_EQ(At(kBase + 9 * P).attrs.prot, uint32_t{PROT_NONE});
  // The reservation's version ended as changed, continued in place.
  const index::Version& before = At(kBase + 3 * P, 15);
  EXPECT_EQ(before.end_kind, End::kChanged);
  EXPECT_EQ(At(kBase + 3 * P).prev, idx_.Lookup(idx_.ProcessesWithPid(1)[0], kBase + 3 * P, 15));
}

TEST_F(CommitRulesTest, OneCommitSpanningTwoReservedPiecesCommitsBoth) {
  Mmap(10, kBase, 8 * P, PROT_NONE, kAnon, 1);
  Mprotect(20, kBase + 3 * P, P, PROT_READ, 2);  // splits the reservation in three
  Mprotect(30, kBase + 3 * P, P, PROT_NONE, 3);  // and back: three PROT_NONE pieces
  Mprotect(40, kBase + 2 * P, 4 * P, kRW, 4);    // one commit across them
  Done();
  for (uint64_t page = 2; page < 6; ++page) {
    EXPECT_EQ(CommitTag(kBase + page * P), 4u) << page;
    EXPECT_EQ(OriginTag(kBase + page * P), 1u) << page;
  }
}

TEST_F(CommitRulesTest, DecommitClearsTheCommitAndRecommitNamesTheNewCall) {
  Mmap(10, kBase, 8 * P, PROT_NONE, kAnon, 1);
  Mprotect(20, kBase, 8 * P, kRW, 2);
  Call(30, Syscall::kMadvise, {kBase + 4 * P, 4 * P, MADV_DONTNEED}, 0, 3);
  Mprotect(40, kBase + 4 * P, 4 * P, PROT_NONE, 4);  // decommit
  Mprotect(50, kBase + 6 * P, 2 * P, kRW, 5);        // recommit part
  Done();
  EXPECT_EQ(CommitTag(kBase), 2u);
  EXPECT_EQ(CommitTag(kBase + 4 * P), 0u);
  EXPECT_EQ(At(kBase + 4 * P, 45).begin, Begin::kDecommitted);
  EXPECT_EQ(At(kBase + 4 * P).attrs.prot, uint32_t{PROT_NONE});
  EXPECT_EQ(CommitTag(kBase + 6 * P), 5u);
  EXPECT_EQ(OriginTag(kBase + 7 * P), 1u);
  // madvise changed no version; it is kept beside them.
  const index::Process& proc = idx_.process(idx_.ProcessesWithPid(1)[0]);
  ASSERT_EQ(proc.advice.size(), 1u);
  EXPECT_EQ(proc.advice[0].start, kBase + 4 * P);
  EXPECT_EQ(Tag(proc.advice[0].event), 3u);
}

TEST_F(CommitRulesTest, ProtChangesThatAreNotCommitsKeepTheCommit) {
  Mmap(10, kBase, 4 * P, kRW, kAnon, 1);          // accessible from creation
  Mprotect(20, kBase, P, PROT_READ, 2);          // RW -> R: no commit
  Mprotect(30, kBase + P, P, kRW, 3);            // same prot: nothing
  Done();
  EXPECT_EQ(CommitTag(kBase), 0u);
  EXPECT_EQ(At(kBase).begin, Begin::kProtected);
  EXPECT_EQ(At(kBase).attrs.prot, uint32_t{PROT_READ});
  EXPECT_EQ(Live(), (Ranges{{kBase, kBase + P}, {kBase + P, kBase + 4 * P}}));
  EXPECT_EQ(idx_.stats().calls_no_change, 1u);
  EXPECT_EQ(idx_.num_events(), 2u);  // the no-op mprotect is not recorded
}

TEST_F(CommitRulesTest, HotSpotCommitsAndUncommitsWithMapFixedInsideTheReservation) {
  Mmap(10, kBase, 16 * P, PROT_NONE, kAnon | MAP_NORESERVE, 1);        // reserve
  Mmap(20, kBase, 4 * P, kRW, kAnon | MAP_FIXED, 2);                   // commit young
  Mprotect(25, kBase + 8 * P, P, PROT_READ, 9);                        // a non-NONE page inside
  Mmap(30, kBase + 6 * P, 4 * P, kRW, kAnon | MAP_FIXED, 3);           // commit old, across it
  Mmap(40, kBase + 2 * P, 2 * P, PROT_NONE, kAnon | MAP_FIXED | MAP_NORESERVE, 4);  // uncommit
  Done();
  EXPECT_EQ(OriginTag(kBase), 1u);
  EXPECT_EQ(CommitTag(kBase), 2u);
  EXPECT_EQ(OriginTag(kBase + 2 * P), 1u);
  EXPECT_EQ(CommitTag(kBase + 2 * P), 0u);
  EXPECT_EQ(At(kBase + 2 * P).begin, Begin::kDecommitted);
  EXPECT_EQ(OriginTag(kBase + 6 * P), 1u);
  EXPECT_EQ(CommitTag(kBase + 6 * P), 3u);
  // The r-- page was not PROT_NONE: that MAP_FIXED replaced it.
  EXPECT_EQ(OriginTag(kBase + 8 * P), 3u);
  EXPECT_EQ(CommitTag(kBase + 8 * P), 0u);
  EXPECT_EQ(OriginTag(kBase + 9 * P), 1u);
  EXPECT_EQ(CommitTag(kBase + 9 * P), 3u);
}

TEST_F(CommitRulesTest, MapFixedOverAccessibleMemoryOrAFileStillReplaces) {
  Mmap(10, kBase, 4 * P, kRW, kAnon, 1);
  Mmap(20, kBase, 2 * P, kRW, kAnon | MAP_FIXED, 2);  // RW over RW: a new mapping
  Mmap(30, kBase + 4 * P, 4 * P, PROT_NONE, kAnon, 3);
  Call(40, Syscall::kMmap, {kBase + 4 * P, P, PROT_READ, MAP_PRIVATE | MAP_FIXED, 5, 0},
       static_cast<int64_t>(kBase + 4 * P), 4);  // a file over a reservation
  Done();
  EXPECT_EQ(OriginTag(kBase), 2u);
  EXPECT_EQ(At(kBase, 15).end_kind, End::kReplaced);
  EXPECT_EQ(OriginTag(kBase + 4 * P), 4u);
  EXPECT_EQ(CommitTag(kBase + 4 * P), 0u);
}

TEST_F(CommitRulesTest, PkeyMprotectCommitsLikeMprotect) {
  Mmap(10, kBase, 4 * P, PROT_NONE, kAnon, 1);
  Call(20, Syscall::kPkeyMprotect, {kBase, 2 * P, kRW, ~0ull}, 0, 2);
  Done();
  EXPECT_EQ(CommitTag(kBase), 2u);
  EXPECT_EQ(At(kBase).attrs.prot, kRW);
}

TEST_F(CommitRulesTest, AnMprotectThatRunsIntoAHoleChangesTheMappedPrefix) {
  Mmap(10, kBase, 4 * P, PROT_NONE, kAnon, 1);
  Mmap(20, kBase + 6 * P, 2 * P, PROT_NONE, kAnon, 2);
  Mprotect(30, kBase + 2 * P, 6 * P, kRW, 3, -ENOMEM);  // hole at 4..6
  Mprotect(40, kBase + 5 * P, 2 * P, kRW, 4, -ENOMEM);  // starts in the hole: nothing
  Mprotect(50, kBase, P, kRW, 5, -EACCES);              // other failures: nothing
  Done();
  EXPECT_EQ(CommitTag(kBase + 3 * P), 3u);
  EXPECT_EQ(CommitTag(kBase + 6 * P), 0u);
  EXPECT_EQ(At(kBase + 6 * P).attrs.prot, uint32_t{PROT_NONE});
  EXPECT_EQ(CommitTag(kBase), 0u);
  EXPECT_EQ(idx_.stats().calls_failed, 2u);
}

TEST_F(CommitRulesTest, MovesAndForksCarryTheCommit) {
  Mmap(10, kBase, 4 * P, PROT_NONE, kAnon, 1);
  Mprotect(20, kBase, 4 * P, kRW, 2);
  Call(30, Syscall::kMremap, {kBase, 4 * P, 4 * P, MREMAP_MAYMOVE | MREMAP_FIXED, 0x900000}, 0x900000,
       3);
  Done();
  EXPECT_EQ(OriginTag(0x900000), 1u);
  EXPECT_EQ(CommitTag(0x902000), 2u);
}

TEST_F(CommitRulesTest, AnMprotectOfPagesTheTraceNeverSawMakesThemBeforeTracePages) {
  Mprotect(10, kBase, 2 * P, kRW, 1);  // e.g. attach mode
  Done();
  const index::Version& v = At(kBase);
  EXPECT_EQ(v.begin, Begin::kBeforeTrace);
  EXPECT_FALSE(v.origin.valid());
  EXPECT_EQ(v.attrs.prot, kRW);
  // Without -d the trace cannot say they were PROT_NONE: no commit claimed.
  EXPECT_FALSE(v.commit.valid());
}

TEST_F(CommitRulesTest, AttachedWithDataMappingsUnseenPagesWereReservations) {
  idx_.mutable_stats().data_mappings = true;  // perf record -d: every readable mapping reported
  Mprotect(10, kBase, 2 * P, kRW, 1);
  Done();
  EXPECT_EQ(CommitTag(kBase), 1u);
  EXPECT_FALSE(At(kBase).origin.valid());
}

}  // namespace
}  // namespace pageblame::replay

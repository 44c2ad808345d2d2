// TraceIndex's queries on a hand-made timeline: process generations by pid,
// Lookup of the end state (live map) and of past times (interval indexes),
// RegionsAt and History, all with half-open bounds in space and time.
#include "processor/index/trace_index.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pageblame::index {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Version keeps `begin` and `end_kind` in the tail padding of `attrs`
// (timeline_types.h): writing the attrs, or copying the version, keeps them.
TEST(VersionTest, WritingItsAttrsKeepsHowItBeganAndEnded) {
  Version v;
  v.begin = Begin::kProtected;
  v.end_kind = End::kMovedOut;
  v.process = 7;
  RegionAttrs a;
  a.prot = 5;
  a.pgoff = 0x123456789000;
  a.path = StringId(9);
  a.prot_known = false;
  v.attrs = a;
  const Version copy = v;
  for (const Version* x : {static_cast<const Version*>(&v), &copy}) {
    EXPECT_EQ(x->begin, Begin::kProtected);
    EXPECT_EQ(x->end_kind, End::kMovedOut);
    EXPECT_EQ(x->process, 7u);
    EXPECT_EQ(x->attrs.prot, 5u);
    EXPECT_EQ(x->attrs.pgoff, 0x123456789000u);
    EXPECT_EQ(x->attrs.path, StringId(9));
    EXPECT_FALSE(x->attrs.prot_known);
  }
  v.attrs = RegionAttrs();
  EXPECT_EQ(v.begin, Begin::kProtected);
  EXPECT_EQ(v.end_kind, End::kMovedOut);
  EXPECT_TRUE(v.attrs.prot_known);
}

TEST(TraceIndexTest, ProcessGenerationsByPidAndEveryPidOnce) {
  TraceIndex idx;
  Process p;
  for (uint32_t pid : {10u, 20u, 10u, 5u, 10u}) {
    p.pid = pid;
    idx.AddProcess(p);
  }
  EXPECT_THAT(idx.ProcessesWithPid(10), ElementsAre(0u, 2u, 4u));  // oldest first
  EXPECT_THAT(idx.ProcessesWithPid(5), ElementsAre(3u));
  EXPECT_THAT(idx.ProcessesWithPid(99), IsEmpty());
  EXPECT_THAT(idx.Pids(), ElementsAre(5u, 10u, 20u));
  EXPECT_EQ(idx.num_processes(), 5u);
  EXPECT_EQ(idx.process(3).pid, 5u);
  TraceIndex empty;
  EXPECT_THAT(empty.Pids(), IsEmpty());
}

// Process 0 (pid 1):
//   A [0x1000, 0x3000) over t [10, 20): split in two at 20 (an mprotect)
//   B [0x1000, 0x2000) over t [20, end)  (live)
//   C [0x2000, 0x3000) over t [20, 30): unmapped at 30
//   D [0x5000, 0x6000) over t [40, end) (live)
// Process 1 (pid 2): E [0x2000, 0x3000) over t [0, end), to show spaces
// are apart.
class TraceIndexQueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Process proc;
    proc.pid = 1;
    p0_ = idx_.AddProcess(proc);
    proc.pid = 2;
    p1_ = idx_.AddProcess(proc);
    a_ = Add(p0_, 0x1000, 0x3000, 10, 20);
    b_ = Add(p0_, 0x1000, 0x2000, 20, kEndOfTrace);
    c_ = Add(p0_, 0x2000, 0x3000, 20, 30);
    d_ = Add(p0_, 0x5000, 0x6000, 40, kEndOfTrace);
    e_ = Add(p1_, 0x2000, 0x3000, 0, kEndOfTrace);
  }
  VersionId Add(uint32_t p, uint64_t start, uint64_t end, uint64_t from, uint64_t to) {
    Version v;
    v.process = p;
    v.start = start;
    v.end = end;
    v.t_from = from;
    v.t_to = to;
    const VersionId id = idx_.AddVersion(v);
    if (to == kEndOfTrace) idx_.mutable_process(p).live[start] = LiveRegion{end, id, from};
    return id;
  }

  TraceIndex idx_;
  uint32_t p0_ = 0, p1_ = 0;
  VersionId a_, b_, c_, d_, e_;
};

TEST_F(TraceIndexQueryTest, LookupOfTheEndStateIsHalfOpen) {
  idx_.Finalize();
  EXPECT_FALSE(idx_.Lookup(p0_, 0xfff, kEndOfTrace).valid());
  EXPECT_EQ(idx_.Lookup(p0_, 0x1000, kEndOfTrace), b_);
  EXPECT_EQ(idx_.Lookup(p0_, 0x1fff, kEndOfTrace), b_);
  EXPECT_FALSE(idx_.Lookup(p0_, 0x2000, kEndOfTrace).valid());  // C ended; E is another process's
  EXPECT_FALSE(idx_.Lookup(p0_, 0x4fff, kEndOfTrace).valid());
  EXPECT_EQ(idx_.Lookup(p0_, 0x5000, kEndOfTrace), d_);
  EXPECT_FALSE(idx_.Lookup(p0_, 0x6000, kEndOfTrace).valid());
  EXPECT_EQ(idx_.Lookup(p1_, 0x2000, kEndOfTrace), e_);
}

TEST_F(TraceIndexQueryTest, TheEndStateIsKnownBeforeFinalize) {
  EXPECT_EQ(idx_.Lookup(p0_, 0x1800, kEndOfTrace), b_);
  EXPECT_THAT(idx_.RegionsAt(p0_, kEndOfTrace), ElementsAre(b_, d_));
}

TEST_F(TraceIndexQueryTest, LookupAtAPastTimeIsHalfOpenInTime) {
  idx_.Finalize();
  EXPECT_FALSE(idx_.Lookup(p0_, 0x1000, 9).valid());  // before A
  EXPECT_EQ(idx_.Lookup(p0_, 0x1000, 10), a_);        // t_from is in
  EXPECT_EQ(idx_.Lookup(p0_, 0x2800, 19), a_);
  EXPECT_EQ(idx_.Lookup(p0_, 0x1000, 20), b_);        // t_to is out: the successor
  EXPECT_EQ(idx_.Lookup(p0_, 0x2800, 20), c_);
  EXPECT_EQ(idx_.Lookup(p0_, 0x2fff, 29), c_);
  EXPECT_FALSE(idx_.Lookup(p0_, 0x3000, 29).valid());  // space: end is out
  EXPECT_FALSE(idx_.Lookup(p0_, 0x2800, 30).valid());  // C gone at 30
  EXPECT_FALSE(idx_.Lookup(p0_, 0x5000, 39).valid());
  EXPECT_EQ(idx_.Lookup(p0_, 0x5000, 40), d_);
  // A finite time after everything: the live versions, as at kEndOfTrace.
  EXPECT_EQ(idx_.Lookup(p0_, 0x1000, kEndOfTrace - 1), b_);
  EXPECT_EQ(idx_.Lookup(p1_, 0x2800, 25), e_);
}

TEST_F(TraceIndexQueryTest, UnknownProcessesHaveNothing) {
  idx_.Finalize();
  EXPECT_FALSE(idx_.Lookup(7, 0x1000, kEndOfTrace).valid());
  EXPECT_FALSE(idx_.Lookup(7, 0x1000, 15).valid());
  EXPECT_THAT(idx_.RegionsAt(7, kEndOfTrace), IsEmpty());
  EXPECT_THAT(idx_.RegionsAt(7, 15), IsEmpty());
  EXPECT_THAT(idx_.History(7, 0x1000), IsEmpty());
}

TEST_F(TraceIndexQueryTest, RegionsAtATimeAreThoseAliveThenSortedByStart) {
  idx_.Finalize();
  EXPECT_THAT(idx_.RegionsAt(p0_, 9), IsEmpty());
  EXPECT_THAT(idx_.RegionsAt(p0_, 10), ElementsAre(a_));
  EXPECT_THAT(idx_.RegionsAt(p0_, 20), ElementsAre(b_, c_));
  EXPECT_THAT(idx_.RegionsAt(p0_, 35), ElementsAre(b_));
  EXPECT_THAT(idx_.RegionsAt(p0_, 40), ElementsAre(b_, d_));
  EXPECT_THAT(idx_.RegionsAt(p0_, kEndOfTrace), ElementsAre(b_, d_));
  EXPECT_THAT(idx_.RegionsAt(p1_, 0), ElementsAre(e_));
}

TEST_F(TraceIndexQueryTest, HistoryIsEveryVersionThatHeldTheAddressOldestFirst) {
  idx_.Finalize();
  EXPECT_THAT(idx_.History(p0_, 0x1000), ElementsAre(a_, b_));
  EXPECT_THAT(idx_.History(p0_, 0x2000), ElementsAre(a_, c_));
  EXPECT_THAT(idx_.History(p0_, 0x3000), IsEmpty());
  EXPECT_THAT(idx_.History(p0_, 0x5fff), ElementsAre(d_));
  EXPECT_THAT(idx_.History(p1_, 0x2000), ElementsAre(e_));
}

TEST(TraceIndexTest, HistoryOrdersByTimeNotByAddressOrId) {
  TraceIndex idx;
  Process proc;
  proc.pid = 1;
  const uint32_t p = idx.AddProcess(proc);
  Version late;
  late.process = p;
  late.start = 0x1000;  // starts lower, added first, but later in time
  late.end = 0x4000;
  late.t_from = 50;
  const VersionId first_added = idx.AddVersion(late);
  Version early = late;
  early.start = 0x2000;
  early.t_from = 5;
  early.t_to = 50;
  const VersionId second_added = idx.AddVersion(early);
  Version same_time = early;  // equal t_from: by id
  const VersionId third_added = idx.AddVersion(same_time);
  idx.Finalize();
  EXPECT_THAT(idx.History(p, 0x2000), ElementsAre(second_added, third_added, first_added));
}

}  // namespace
}  // namespace pageblame::index

// Replay rules of the design brief, one test each, driven through the real
// Replayer with hand-built events (the real-trace tests are in tests/).
#include "processor/replay/replayer.h"

#include <sys/mman.h>

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/replay/call_events_for_test.h"

namespace pageblame::replay {
namespace {

using decode::Syscall;
using index::Begin;
using index::End;
using index::kEndOfTrace;

constexpr uint64_t P = 4096;
constexpr uint64_t kAnon = MAP_PRIVATE | MAP_ANONYMOUS;

class ReplayerTest : public ::testing::Test {
 protected:
  ReplayerTest() : replayer_(&idx_, nullptr) {}

  void Call(uint64_t t, uint32_t pid, uint32_t tid, Syscall sc, std::vector<uint64_t> args,
            int64_t ret, uint32_t stack_tag = 0) {
    std::vector<uint64_t> ips = {0x1000 + stack_tag, 0x2000};
    auto [in, out] = CallEvents(t, pid, tid, sc, args, ret, idx_.stacks().Intern(ips));
    replayer_.Apply(in);
    replayer_.Apply(out);
  }
  void Mmap(uint64_t t, uint32_t pid, uint64_t addr, uint64_t len, uint64_t flags, int64_t ret,
            uint32_t tag = 0) {
    Call(t, pid, pid, Syscall::kMmap, {addr, len, PROT_READ | PROT_WRITE, flags, ~0ull, 0}, ret, tag);
  }
  // One sample (enter, exit or raw duplicate) of a one-page anonymous mmap by
  // pid 1, tid 1.
  void MmapSample(TraceEvent::Kind kind, uint64_t t, int64_t ret, uint64_t raw_duplicate_time, bool flag) {
    TraceEvent e;
    e.kind = kind;
    e.time = t;
    e.call().raw_duplicate_time = raw_duplicate_time;
    e.flag = flag;
    e.pid = e.tid = 1;
    e.call().ret = ret;
    e.call().args[1] = P;
    e.call().args[3] = kAnon;
    replayer_.Apply(e);
  }
  void Fork(uint64_t t, uint32_t child, uint32_t parent) {
    TraceEvent e;
    e.Reset(TraceEvent::Kind::kFork);
    e.time = t;
    e.pid = e.tid = child;
    e.task().ppid = e.task().ptid = parent;
    replayer_.Apply(e);
  }
  void Exec(uint64_t t, uint32_t pid) {
    TraceEvent e;
    e.Reset(TraceEvent::Kind::kComm);
    e.time = t;
    e.pid = e.tid = pid;
    e.flag = true;
    e.comm().comm = idx_.strings().Intern("prog");
    replayer_.Apply(e);
  }

  uint32_t Proc(uint32_t pid) {
    auto ps = idx_.ProcessesWithPid(pid);
    EXPECT_FALSE(ps.empty());
    return ps.empty() ? 0 : ps.back();
  }
  // The live regions as [start,end) pairs (adjacent pieces merged when they
  // share an origin), for compact expectations.
  std::vector<std::pair<uint64_t, uint64_t>> Live(uint32_t pid) {
    std::vector<std::pair<uint64_t, uint64_t>> out;
    for (VersionId v : idx_.RegionsAt(Proc(pid), kEndOfTrace)) {
      const index::Version& ver = idx_.version(v);
      out.emplace_back(ver.start, ver.end);
    }
    return out;
  }
  const index::Version& At(uint32_t pid, uint64_t addr, uint64_t t = kEndOfTrace) {
    VersionId v = idx_.Lookup(Proc(pid), addr, t);
    EXPECT_TRUE(v.valid()) << std::hex << addr;
    static index::Version none;
    return v.valid() ? idx_.version(v) : none;
  }
  uint64_t OriginTime(uint32_t pid, uint64_t addr) {
    const index::Version& v = At(pid, addr);
    return v.origin.valid() ? idx_.event(v.origin).time : 0;
  }
  void Done() {
    replayer_.Finish();
    idx_.Finalize();
  }

  index::TraceIndex idx_;
  Replayer replayer_;
};

using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;

TEST_F(ReplayerTest, MmapRoundsLengthUpAndFailedCallChangesNothing) {
  Mmap(10, 1, 0, 3 * P + 1, kAnon, 0x10000);
  Mmap(20, 1, 0, P, kAnon, -12);  // ENOMEM
  Done();
  EXPECT_EQ(Live(1), (Ranges{{0x10000, 0x10000 + 4 * P}}));
  EXPECT_EQ(idx_.stats().calls_failed, 1u);
  EXPECT_EQ(idx_.num_events(), 1u);
}

TEST_F(ReplayerTest, MapFixedReplacesTheMiddleAndKeepsBothEndsOrigins) {
  Mmap(10, 1, 0, 8 * P, kAnon, 0x10000, 1);
  Mmap(20, 1, 0x10000 + 2 * P, 2 * P, kAnon | MAP_FIXED, 0x10000 + 2 * P, 2);
  Done();
  EXPECT_EQ(Live(1), (Ranges{{0x10000, 0x12000}, {0x12000, 0x14000}, {0x14000, 0x18000}}));
  EXPECT_EQ(OriginTime(1, 0x10000), 11u);
  EXPECT_EQ(OriginTime(1, 0x12000), 21u);
  EXPECT_EQ(OriginTime(1, 0x17000), 11u);
  // The replaced pages' old version ended as "replaced" at the second call.
  const index::Version& old = At(1, 0x12000, 15);
  EXPECT_EQ(old.end_kind, End::kReplaced);
  EXPECT_EQ(old.t_to, 21u);
}

TEST_F(ReplayerTest, PartialMunmapSplitsAndUnmappingNothingIsFine) {
  Mmap(10, 1, 0, 4 * P, kAnon, 0x10000);
  Call(20, 1, 1, Syscall::kMunmap, {0x11000, P}, 0);
  Call(30, 1, 1, Syscall::kMunmap, {0x90000, P}, 0);  // nothing there
  Done();
  EXPECT_EQ(Live(1), (Ranges{{0x10000, 0x11000}, {0x12000, 0x14000}}));
  EXPECT_EQ(OriginTime(1, 0x13000), 11u);
  EXPECT_EQ(At(1, 0x13000).begin, Begin::kSplit);
  EXPECT_EQ(idx_.stats().calls_no_change, 1u);
  EXPECT_FALSE(idx_.Lookup(Proc(1), 0x11000, kEndOfTrace).valid());
  EXPECT_TRUE(idx_.Lookup(Proc(1), 0x11000, 15).valid());  // before the munmap
}

TEST_F(ReplayerTest, BrkGrowthKeepsEachCallsStackAndShrinkRemoves) {
  Call(10, 1, 1, Syscall::kBrk, {0}, 0x500000);           // initial break
  Call(20, 1, 1, Syscall::kBrk, {0x521000}, 0x521000, 1);  // grow 0x21000
  Call(30, 1, 1, Syscall::kBrk, {0x542800}, 0x542800, 2);  // grow to unaligned end
  Call(40, 1, 1, Syscall::kBrk, {0x530000}, 0x530000, 3);  // shrink
  Call(50, 1, 1, Syscall::kBrk, {0x9000000000}, 0x530000); // refused: old break
  Done();
  EXPECT_EQ(Live(1), (Ranges{{0x500000, 0x521000}, {0x521000, 0x530000}}));
  EXPECT_EQ(OriginTime(1, 0x500000), 21u);
  EXPECT_EQ(OriginTime(1, 0x52f000), 31u);
  EXPECT_TRUE(idx_.Lookup(Proc(1), 0x542000, 35).valid());  // up to PAGE_ALIGN(0x542800)
  EXPECT_FALSE(idx_.Lookup(Proc(1), 0x543000, 35).valid());
  EXPECT_EQ(idx_.stats().calls_failed, 1u);
}

TEST_F(ReplayerTest, MremapInPlaceShrinkAndGrow) {
  Mmap(10, 1, 0, 4 * P, kAnon, 0x10000);
  Call(20, 1, 1, Syscall::kMremap, {0x10000, 4 * P, 2 * P, 0, 0}, 0x10000);
  Call(30, 1, 1, Syscall::kMremap, {0x10000, 2 * P, 6 * P, 0, 0}, 0x10000, 7);
  Done();
  EXPECT_EQ(Live(1), (Ranges{{0x10000, 0x12000}, {0x12000, 0x16000}}));
  EXPECT_EQ(OriginTime(1, 0x10000), 11u);
  EXPECT_EQ(OriginTime(1, 0x15000), 31u);  // the grown tail is the mremap's
  EXPECT_EQ(idx_.event(At(1, 0x15000).origin).syscall, Syscall::kMremap);
}

TEST_F(ReplayerTest, MremapMoveKeepsHistoryAndGrowsTail) {
  Mmap(10, 1, 0, 2 * P, kAnon, 0x10000);
  Call(20, 1, 1, Syscall::kMremap, {0x10000, 2 * P, 4 * P, MREMAP_MAYMOVE, 0}, 0x80000);
  Done();
  EXPECT_EQ(Live(1), (Ranges{{0x80000, 0x82000}, {0x82000, 0x84000}}));
  const index::Version& moved = At(1, 0x81000);
  EXPECT_EQ(moved.begin, Begin::kMovedIn);
  EXPECT_EQ(idx_.event(moved.origin).syscall, Syscall::kMmap);  // still the mmap's pages
  EXPECT_EQ(idx_.event(At(1, 0x83000).origin).syscall, Syscall::kMremap);
  // History of the new address goes back to the source through `prev`.
  ASSERT_TRUE(moved.prev.valid());
  EXPECT_EQ(idx_.version(moved.prev).start, 0x10000u);
  EXPECT_EQ(idx_.version(moved.prev).end_kind, End::kMovedOut);
}

TEST_F(ReplayerTest, MremapFixedUnmapsTargetAndDontUnmapKeepsSource) {
  Mmap(10, 1, 0, 2 * P, kAnon, 0x10000, 1);
  Mmap(20, 1, 0, 4 * P, kAnon, 0x40000, 2);
  Call(30, 1, 1, Syscall::kMremap, {0x10000, 2 * P, 2 * P, MREMAP_MAYMOVE | MREMAP_FIXED, 0x41000},
       0x41000);
  Mmap(40, 1, 0, 2 * P, kAnon, 0x60000, 3);
  Call(50, 1, 1, Syscall::kMremap, {0x60000, 2 * P, 2 * P, MREMAP_MAYMOVE | 4 /*DONTUNMAP*/, 0},
       0x70000);
  Done();
  EXPECT_EQ(Live(1), (Ranges{{0x40000, 0x41000}, {0x41000, 0x43000}, {0x43000, 0x44000},
                             {0x60000, 0x62000}, {0x70000, 0x72000}}));
  EXPECT_EQ(OriginTime(1, 0x41000), 11u);  // moved pages keep the first mmap
  EXPECT_EQ(OriginTime(1, 0x43000), 21u);
  EXPECT_EQ(OriginTime(1, 0x71000), 41u);
}

TEST_F(ReplayerTest, ThreadsShareTheirProcessAndPairPerThread) {
  // Two threads interleave: enter A, enter B, exit B, exit A.
  auto enter = [&](uint64_t t, uint32_t tid, uint64_t len) {
    TraceEvent e;
    e.kind = TraceEvent::Kind::kEnter;
    e.time = t;
    e.pid = 1;
    e.tid = tid;
    e.call().args[1] = len;
    e.call().args[3] = kAnon;
    replayer_.Apply(e);
  };
  auto exit = [&](uint64_t t, uint32_t tid, int64_t ret) {
    TraceEvent e;
    e.kind = TraceEvent::Kind::kExit;
    e.time = t;
    e.pid = 1;
    e.tid = tid;
    e.call().ret = ret;
    replayer_.Apply(e);
  };
  enter(10, 1, P);
  enter(11, 2, 3 * P);
  exit(12, 2, 0x20000);
  exit(13, 1, 0x10000);
  Done();
  EXPECT_EQ(Live(1), (Ranges{{0x10000, 0x11000}, {0x20000, 0x23000}}));
  EXPECT_EQ(idx_.event(At(1, 0x22000).origin).tid, 2u);
}

TEST_F(ReplayerTest, ForkCopiesTheSpaceAndExecEmptiesIt) {
  Mmap(10, 1, 0, 2 * P, kAnon, 0x10000);
  Fork(20, 2, 1);
  Call(30, 2, 2, Syscall::kMunmap, {0x10000, P}, 0);
  Mmap(40, 1, 0, P, kAnon, 0x30000);
  Fork(50, 3, 1);
  Exec(60, 3);
  Mmap(70, 3, 0, P, kAnon, 0x50000);
  Done();
  EXPECT_EQ(Live(1), (Ranges{{0x10000, 0x12000}, {0x30000, 0x31000}}));
  EXPECT_EQ(Live(2), (Ranges{{0x11000, 0x12000}}));
  EXPECT_EQ(At(2, 0x11000).begin, Begin::kSplit);
  EXPECT_EQ(idx_.event(At(2, 0x11000).origin).pid, 1u);  // created by the parent
  EXPECT_EQ(Live(3), (Ranges{{0x50000, 0x51000}}));
  EXPECT_TRUE(idx_.Lookup(Proc(3), 0x30000, 55).valid());  // before exec
}

TEST_F(ReplayerTest, Mmap2OutsideACallIsBeforeTraceInsideACallNamesTheFile) {
  TraceEvent m;
  m.Reset(TraceEvent::Kind::kMmap);
  m.time = 5;
  m.pid = m.tid = 1;
  m.mmap().start = 0x400000;
  m.mmap().len = 2 * P;
  m.mmap().prot = PROT_READ | PROT_EXEC;
  m.mmap().has_prot = true;
  m.mmap().filename = idx_.strings().Intern("/bin/prog");
  replayer_.Apply(m);
  // An mmap call whose MMAP2 record arrives while it is in flight.
  TraceEvent in;
  in.kind = TraceEvent::Kind::kEnter;
  in.time = 10;
  in.pid = in.tid = 1;
  in.call().args[1] = P;
  in.call().args[2] = PROT_READ | PROT_EXEC;
  in.call().args[3] = MAP_PRIVATE;
  replayer_.Apply(in);
  m.time = 11;
  m.mmap().start = 0x700000;
  m.mmap().len = P;
  m.mmap().filename = idx_.strings().Intern("/lib/libc.so.6");
  replayer_.Apply(m);
  TraceEvent out = in;
  out.kind = TraceEvent::Kind::kExit;
  out.time = 12;
  out.call().ret = 0x700000;
  replayer_.Apply(out);
  Done();
  EXPECT_FALSE(At(1, 0x401000).origin.valid());
  EXPECT_EQ(At(1, 0x401000).begin, Begin::kBeforeTrace);
  EXPECT_TRUE(At(1, 0x700000).origin.valid());
  EXPECT_EQ(idx_.strings().Get(At(1, 0x700000).attrs.path), "/lib/libc.so.6");
}

// The kernel grows a file mapping's VMA with its offset going on
// (vma->vm_pgoff is the offset of vm_start): the tail an mremap adds, in
// place or after a move, maps the file pages that follow.
TEST_F(ReplayerTest, AGrownFileMappingsTailContinuesTheFileOffset) {
  for (uint64_t start : {0x600000ull, 0x800000ull}) {
    TraceEvent m;
    m.Reset(TraceEvent::Kind::kMmap);
    m.time = 5;
    m.pid = m.tid = 1;
    m.mmap().start = start;
    m.mmap().len = 2 * P;
    m.mmap().pgoff = 0x3000;
    m.mmap().prot = PROT_READ;
    m.mmap().has_prot = true;
    m.mmap().filename = idx_.strings().Intern("/usr/share/data.bin");
    replayer_.Apply(m);
  }
  Call(10, 1, 1, Syscall::kMremap, {0x600000, 2 * P, 3 * P, 0, 0}, 0x600000);  // in place
  Call(20, 1, 1, Syscall::kMremap, {0x800000, 2 * P, 3 * P, MREMAP_MAYMOVE, 0}, 0x900000);  // moved
  Done();
  EXPECT_EQ(At(1, 0x602000).start, 0x602000u);
  EXPECT_EQ(At(1, 0x602000).attrs.pgoff, 0x5000u);
  EXPECT_EQ(At(1, 0x900000).attrs.pgoff, 0x3000u);
  EXPECT_EQ(At(1, 0x902000).start, 0x902000u);
  EXPECT_EQ(At(1, 0x902000).attrs.pgoff, 0x5000u);
}

TEST_F(ReplayerTest, UnmatchedExitAndLostExitAreCounted) {
  TraceEvent out;
  out.kind = TraceEvent::Kind::kExit;
  out.time = 5;
  out.pid = out.tid = 1;
  out.call().ret = 0x10000;
  replayer_.Apply(out);  // no enter
  TraceEvent in;
  in.kind = TraceEvent::Kind::kEnter;
  in.time = 6;
  in.pid = in.tid = 1;
  replayer_.Apply(in);
  replayer_.Apply(in);  // the first enter's exit was lost
  Done();
  EXPECT_EQ(idx_.stats().unmatched_exits, 1u);
  EXPECT_EQ(idx_.stats().unmatched_enters, 1u);
  EXPECT_EQ(idx_.stats().pending_at_end, 1u);
}

TEST_F(ReplayerTest, AnotherSyscallsExitOrTheThreadsEndDropsAWaitingEnter) {
  TraceEvent in;
  in.kind = TraceEvent::Kind::kEnter;
  in.syscall = Syscall::kMmap;
  in.time = 5;
  in.pid = in.tid = 1;
  replayer_.Apply(in);
  TraceEvent out = in;
  out.kind = TraceEvent::Kind::kExit;
  out.syscall = Syscall::kMunmap;  // not the call that was entered
  out.time = 6;
  replayer_.Apply(out);
  out.syscall = Syscall::kMmap;  // the mmap's enter went with it
  out.time = 7;
  out.call().ret = 0x10000;
  replayer_.Apply(out);
  // Thread 2 enters, then exits (the task): its enter gets no exit.
  in.pid = 1;
  in.tid = 2;
  in.time = 8;
  replayer_.Apply(in);
  TraceEvent gone;
  gone.kind = TraceEvent::Kind::kTaskExit;
  gone.pid = 1;
  gone.tid = 2;
  gone.time = 9;
  replayer_.Apply(gone);
  Done();
  EXPECT_EQ(idx_.stats().unmatched_exits, 2u);
  EXPECT_EQ(idx_.stats().unmatched_enters, 0u);
  EXPECT_EQ(idx_.stats().pending_at_end, 0u);
  EXPECT_EQ(idx_.stats().calls, 0u);
}

TEST_F(ReplayerTest, RawDuplicateTimesWidenTheCallsSampleSpan) {
  auto ev = [&](TraceEvent::Kind kind, uint64_t t, uint64_t raw_duplicate, int64_t ret) {
    MmapSample(kind, t, ret, raw_duplicate, false);
  };
  ev(TraceEvent::Kind::kEnter, 106, 100, 0);       // raw enter at 100, syscalls enter at 106
  ev(TraceEvent::Kind::kExit, 135, 131, 0x10000);  // raw exit at 131, syscalls exit at 135
  ev(TraceEvent::Kind::kEnter, 206, 0, 0);         // perf record -e syscalls:*: no raw duplicates
  ev(TraceEvent::Kind::kExit, 235, 0, 0x20000);
  Done();
  ASSERT_EQ(idx_.num_events(), 2u);
  EXPECT_EQ(idx_.event(EventId(0)).first_time, 100u);
  EXPECT_EQ(idx_.event(EventId(0)).last_time, 135u);
  EXPECT_EQ(idx_.event(EventId(1)).first_time, 206u);
  EXPECT_EQ(idx_.event(EventId(1)).last_time, 235u);
}

TEST_F(ReplayerTest, LateRawDuplicatesWidenTheSpanToo) {
  // Some recordings fire the raw_syscalls tracepoint after the syscalls:* one.
  auto ev = [&](TraceEvent::Kind kind, uint64_t t, bool flag, int64_t ret) {
    MmapSample(kind, t, ret, 0, flag);
  };
  ev(TraceEvent::Kind::kEnter, 100, false, 0);
  ev(TraceEvent::Kind::kRawDuplicate, 103, false, 0);  // raw enter, late
  ev(TraceEvent::Kind::kExit, 130, false, 0x10000);
  ev(TraceEvent::Kind::kRawDuplicate, 134, true, 0);   // raw exit, late
  Done();
  ASSERT_EQ(idx_.num_events(), 1u);
  EXPECT_EQ(idx_.event(EventId(0)).first_time, 100u);
  EXPECT_EQ(idx_.event(EventId(0)).last_time, 134u);
}

// The index packs a call's span as 32-bit offsets from its exit
// (index/call_record.h); a call longer than that keeps its exact times.
TEST_F(ReplayerTest, ACallOfSecondsKeepsItsExactSpan) {
  constexpr uint64_t kSecond = 1000000000;
  auto ev = [&](TraceEvent::Kind kind, uint64_t t, bool flag, int64_t ret) {
    MmapSample(kind, t, ret, 0, flag);
  };
  ev(TraceEvent::Kind::kEnter, 100 * kSecond, false, 0);
  ev(TraceEvent::Kind::kExit, 106 * kSecond + 7, false, 0x10000);  // 6 s: past 2^32 ns
  ev(TraceEvent::Kind::kRawDuplicate, 107 * kSecond, true, 0);     // raw exit, a second late
  ev(TraceEvent::Kind::kEnter, 110 * kSecond, false, 0);
  ev(TraceEvent::Kind::kExit, 110 * kSecond + 900, false, 0x20000);
  Done();
  ASSERT_EQ(idx_.num_events(), 2u);
  EXPECT_EQ(idx_.event(EventId(0)).first_time, 100 * kSecond);
  EXPECT_EQ(idx_.event(EventId(0)).time, 106 * kSecond + 7);
  EXPECT_EQ(idx_.event(EventId(0)).last_time, 107 * kSecond);
  EXPECT_EQ(idx_.event(EventId(1)).first_time, 110 * kSecond);
  EXPECT_EQ(idx_.event(EventId(1)).last_time, 110 * kSecond + 900);
}

TEST_F(ReplayerTest, AProcessEndsWithItsLastThreadNotItsMainThread) {
  auto task = [&](TraceEvent::Kind kind, uint64_t t, uint32_t tid, uint32_t parent_tid) {
    TraceEvent e;
    e.Reset(kind);
    e.time = t;
    e.pid = 1;
    e.tid = tid;
    e.task().ppid = 1;
    e.task().ptid = parent_tid;
    replayer_.Apply(e);
  };
  Mmap(10, 1, 0, P, kAnon, 0x10000);
  task(TraceEvent::Kind::kFork, 20, 2, 1);      // a worker thread
  task(TraceEvent::Kind::kTaskExit, 30, 1, 0);  // main thread: pthread_exit
  Call(40, 1, 2, Syscall::kMunmap, {0x10000, P}, 0);  // the worker goes on
  Call(50, 1, 2, Syscall::kMmap, {0, P, PROT_READ, kAnon, ~0ull, 0}, 0x20000);
  EXPECT_EQ(idx_.process(Proc(1)).t_exit, kEndOfTrace);
  task(TraceEvent::Kind::kTaskExit, 60, 2, 0);
  Done();
  EXPECT_EQ(idx_.ProcessesWithPid(1).size(), 1u);  // no phantom second process
  EXPECT_EQ(idx_.process(Proc(1)).t_exit, 60u);
  EXPECT_EQ(Live(1), (Ranges{{0x20000, 0x21000}}));
}

TEST_F(ReplayerTest, AMunmapWhoseExitIsLateSparesPagesAnotherThreadReused) {
  // Thread 2 enters munmap(X) at 20; the kernel frees X; thread 3's plain
  // mmap is placed at X and its exit is recorded (31) before thread 2's (41).
  auto at = [&](uint64_t t, uint32_t tid, TraceEvent::Kind kind, Syscall sc,
                std::vector<uint64_t> args, int64_t ret) {
    TraceEvent e;
    e.kind = kind;
    e.time = t;
    e.pid = 1;
    e.tid = tid;
    e.syscall = sc;
    for (size_t i = 0; i < args.size(); ++i) e.call().args[i] = args[i];
    e.call().ret = ret;
    replayer_.Apply(e);
  };
  Mmap(10, 1, 0, 4 * P, kAnon, 0x10000);
  at(20, 2, TraceEvent::Kind::kEnter, Syscall::kMunmap, {0x10000, 4 * P}, 0);
  at(25, 3, TraceEvent::Kind::kEnter, Syscall::kMmap, {0, P, PROT_READ, kAnon, ~0ull, 0}, 0);
  at(31, 3, TraceEvent::Kind::kExit, Syscall::kMmap, {}, 0x11000);
  at(41, 2, TraceEvent::Kind::kExit, Syscall::kMunmap, {}, 0);
  // A MAP_FIXED mapping made in the same window could have been replaced by
  // either order; the kernel's order is unknowable, so the munmap wins.
  Done();
  EXPECT_EQ(Live(1), (Ranges{{0x11000, 0x12000}}));
  EXPECT_EQ(idx_.event(At(1, 0x11000).origin).tid, 3u);
  EXPECT_EQ(idx_.stats().unmaps_reordered, 1u);
}

}  // namespace
}  // namespace pageblame::replay

// Values from a damaged trace that the kernel cannot have produced (issue
// 21, case 2): the call is skipped and counted, never replayed into a region
// that ends below its start or splits a page.
#include "processor/replay/call_check.h"

#include <sys/mman.h>

#include <cerrno>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/replay/call_events_for_test.h"
#include "processor/replay/replayer.h"

namespace pageblame::replay {
namespace {

using decode::Syscall;
using ::testing::HasSubstr;

constexpr uint64_t P = 4096;
constexpr uint64_t kAnon = MAP_PRIVATE | MAP_ANONYMOUS;
constexpr uint64_t kRw = PROT_READ | PROT_WRITE;

absl::Status Check(Syscall sc, std::vector<uint64_t> args, int64_t ret) {
  args.resize(6);
  return CheckCall(sc, args.data(), ret);
}

TEST(CallCheckTest, WhatTheKernelDoesPasses) {
  EXPECT_TRUE(Check(Syscall::kMmap, {0, 100, kRw, kAnon}, 0x7f0000000000).ok());
  EXPECT_TRUE(Check(Syscall::kMmap, {0, ~0ull, kRw, kAnon}, -ENOMEM).ok());  // failed: not checked
  EXPECT_TRUE(Check(Syscall::kMunmap, {0x7f0000001000, 1}, 0).ok());
  EXPECT_TRUE(Check(Syscall::kMunmap, {0x7f0000001001, P}, -EINVAL).ok());
  EXPECT_TRUE(Check(Syscall::kMremap, {0x7f0000000000, 0, P, MREMAP_MAYMOVE}, 0x7f1000000000).ok());
  EXPECT_TRUE(Check(Syscall::kMprotect, {0x7f0000000000, 0, PROT_NONE}, 0).ok());
  EXPECT_TRUE(Check(Syscall::kMadvise, {0x7f0000000000, 3 * P, MADV_DONTNEED}, 0).ok());
  EXPECT_TRUE(Check(Syscall::kBrk, {0}, 0x55d000000000).ok());
  // The highest page of five-level paging's user space.
  EXPECT_TRUE(Check(Syscall::kMmap, {0, P, kRw, kAnon}, kUserSpaceEnd - P).ok());
}

TEST(CallCheckTest, ImpossibleValuesSayWhich) {
  absl::Status s = Check(Syscall::kMmap, {0, 0xfffffffffffff001ull, kRw, kAnon}, 0x7f0000000000);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(s.message()), HasSubstr("mmap succeeded with the range address 0x7f0000000000 + length 0xfffffffffffff001"));
  s = Check(Syscall::kMremap, {0x7f0000000000, P, 2 * P, MREMAP_MAYMOVE}, 0x7f000010b800);
  EXPECT_THAT(std::string(s.message()), HasSubstr("an unaligned returned address 0x7f000010b800"));
  EXPECT_FALSE(Check(Syscall::kMmap, {0, 0, kRw, kAnon}, 0x7f0000000000).ok());
  EXPECT_FALSE(Check(Syscall::kMmap, {0, P, kRw, kAnon}, kUserSpaceEnd).ok());
  // A huge page length that wraps when rounded to 1 GiB pages.
  EXPECT_FALSE(Check(Syscall::kMmap, {0, ~0ull - P, kRw, kAnon | MAP_HUGETLB | (30ull << 26)},
                     0x7f0000000000)
                   .ok());
  EXPECT_FALSE(Check(Syscall::kMunmap, {0x7f0000000800, P}, 0).ok());
  EXPECT_FALSE(Check(Syscall::kMunmap, {0x7f0000000000, 0}, 0).ok());
  EXPECT_FALSE(Check(Syscall::kMunmap, {0x7f0000000000, ~0ull}, 0).ok());
  EXPECT_FALSE(Check(Syscall::kMremap, {0x7f0000000000, P, 0, MREMAP_MAYMOVE}, 0x7f0000000000).ok());
  EXPECT_FALSE(Check(Syscall::kMremap, {0x7f0000000400, P, P, 0}, 0x7f0000000400).ok());
  EXPECT_FALSE(Check(Syscall::kMprotect, {0x7f0000000000, ~0ull, PROT_READ}, 0).ok());
  EXPECT_FALSE(Check(Syscall::kPkeyMprotect, {0x7f0000000010, P, PROT_READ, 1}, 0).ok());
  EXPECT_FALSE(Check(Syscall::kMadvise, {~0ull & ~(P - 1), 2 * P, MADV_DONTNEED}, 0).ok());
  EXPECT_FALSE(Check(Syscall::kBrk, {0}, static_cast<int64_t>(0xfffffffffffff000ull - 8192)).ok());
}

TEST(CallCheckTest, MappingRecordsMustNotWrap) {
  // perf reports the vsyscall page of every process.
  EXPECT_TRUE(CheckMappingRecord(0xffffffffff600000ull, P).ok());
  EXPECT_FALSE(CheckMappingRecord(0xffffffffff600000ull, 0xa00000).ok());
  EXPECT_FALSE(CheckMappingRecord(0x1000, ~0ull).ok());
}

class ImpossibleCallReplayTest : public ::testing::Test {
 protected:
  ImpossibleCallReplayTest() : replayer_(&idx_, nullptr) {}
  void Call(uint64_t t, Syscall sc, std::vector<uint64_t> args, int64_t ret) {
    auto [in, out] = CallEvents(t, 1, 1, sc, args, ret, idx_.stacks().Intern({0x1000}));
    replayer_.Apply(in);
    replayer_.Apply(out);
  }
  // Every live region of pid 1 after replay, checked to be a page-aligned
  // [start, end) with start < end.
  std::vector<std::pair<uint64_t, uint64_t>> Live() {
    replayer_.Finish();
    idx_.Finalize();
    std::vector<std::pair<uint64_t, uint64_t>> out;
    for (uint32_t p : idx_.ProcessesWithPid(1)) {
      for (VersionId v : idx_.RegionsAt(p, index::kEndOfTrace)) {
        const index::Version& ver = idx_.version(v);
        EXPECT_LT(ver.start, ver.end);
        EXPECT_EQ(ver.start % P, 0u);
        EXPECT_EQ(ver.end % P, 0u);
        out.emplace_back(ver.start, ver.end);
      }
    }
    return out;
  }
  index::TraceIndex idx_;
  Replayer replayer_;
};

// Issue 21: `maps` printed a region whose end was below its start.
TEST_F(ImpossibleCallReplayTest, AnMmapWhoseLengthWrapsIsSkippedAndCounted) {
  Call(10, Syscall::kMmap, {0, P, kRw, kAnon, ~0ull, 0}, 0x7f0000000000);
  Call(20, Syscall::kMmap, {0, 0xffffff0000000000ull, kRw, kAnon, ~0ull, 0}, 0x7f0000100000);
  Call(30, Syscall::kMmap, {0, P, kRw, kAnon, ~0ull, 0}, 0x7f0000200000);
  using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;
  EXPECT_EQ(Live(), (Ranges{{0x7f0000000000, 0x7f0000001000}, {0x7f0000200000, 0x7f0000201000}}));
  const index::TraceStats& st = idx_.stats();
  EXPECT_EQ(st.impossible_calls, 1u);
  EXPECT_EQ(st.impossible_from, 21u);  // the exit's time
  EXPECT_EQ(st.impossible_to, 21u);
  EXPECT_THAT(st.first_impossible, HasSubstr("length 0xffffff0000000000"));
}

// Issue 21: a corrupt mremap return made regions like 0x...b800.
TEST_F(ImpossibleCallReplayTest, AnUnalignedMremapResultIsSkipped) {
  Call(10, Syscall::kMmap, {0, 2 * P, kRw, kAnon, ~0ull, 0}, 0x7f0000000000);
  Call(20, Syscall::kMremap, {0x7f0000000000, 2 * P, 4 * P, MREMAP_MAYMOVE}, 0x7f000010b800);
  Call(30, Syscall::kMunmap, {0x7f0000000800, P}, 0);
  using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;
  EXPECT_EQ(Live(), (Ranges{{0x7f0000000000, 0x7f0000002000}}));
  EXPECT_EQ(idx_.stats().impossible_calls, 2u);
  EXPECT_EQ(idx_.stats().impossible_to, 31u);
}

// mprotect's ENOMEM over a range that wraps changed nothing (the kernel
// refuses it first), where a valid range's ENOMEM changes its mapped prefix.
TEST_F(ImpossibleCallReplayTest, AnMprotectFailingOnAWrappingRangeChangesNothing) {
  Call(10, Syscall::kMmap, {0, 2 * P, kRw, kAnon, ~0ull, 0}, 0x7f0000000000);
  Call(20, Syscall::kMprotect, {0x7f0000000000, ~0ull - 10, PROT_NONE}, -ENOMEM);
  using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;
  EXPECT_EQ(Live(), (Ranges{{0x7f0000000000, 0x7f0000002000}}));
  const VersionId v = idx_.Lookup(idx_.ProcessesWithPid(1).back(), 0x7f0000000000, index::kEndOfTrace);
  ASSERT_TRUE(v.valid());
  EXPECT_EQ(idx_.version(v).attrs.prot, kRw);
  EXPECT_EQ(idx_.stats().calls_failed, 1u);
}

TEST_F(ImpossibleCallReplayTest, AWrappingMappingRecordIsSkipped) {
  TraceEvent e(TraceEvent::Kind::kMmap);
  e.time = 5;
  e.pid = e.tid = 1;
  e.mmap().start = 0xfffffffffff00000ull;
  e.mmap().len = 0x200000;
  e.mmap().filename = idx_.strings().Intern("//anon");
  replayer_.Apply(e);
  EXPECT_TRUE(Live().empty());
  EXPECT_EQ(idx_.stats().impossible_calls, 1u);
}

}  // namespace
}  // namespace pageblame::replay

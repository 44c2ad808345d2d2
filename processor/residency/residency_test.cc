#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/residency/pagemap_sampler.h"
#include "processor/residency/residency_index.h"
#include "processor/residency/snapshot_file.h"

namespace pageblame::residency {
namespace {

using ::testing::HasSubstr;
constexpr uint64_t kPage = 4096;

absl::Span<const uint8_t> Bytes(const std::string& s) {
  return absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

TEST(RangeTallyTest, CountsBytesInsideAnyRange) {
  RangeTally t({{0x1000, 0x3000}, {0x5000, 0x6000}});
  EXPECT_EQ(t.total(), 0x3000u);
  EXPECT_EQ(t.BytesIn(0, 0x10000), 0x3000u);
  EXPECT_EQ(t.BytesIn(0x2000, 0x5800), 0x1800u);
  EXPECT_EQ(t.BytesIn(0x3000, 0x5000), 0u);
  EXPECT_EQ(t.BytesIn(0x5800, 0x5000), 0u);  // empty range
  EXPECT_TRUE(t.Contains(0x5fff));
  EXPECT_FALSE(t.Contains(0x6000));
  EXPECT_EQ(RangeTally().BytesIn(0, ~0ull), 0u);
}

ResidencySnapshot Sample() {
  ResidencySnapshot s;
  s.pid = 42;
  s.time = 5000000000;
  s.end_time = 5000100000;
  s.reason = SnapshotReason::kStop;
  s.rollup_rss = 7 * kPage;
  s.rollup_swap = kPage;
  // Two read ranges; inside them present and swapped runs with gaps.
  s.read = RangeTally({{0x10000, 0x20000}, {0x7f0000000000, 0x7f0000010000}});
  s.swapped = RangeTally({{0x13000, 0x14000}});
  s.present = RangeTally({{0x10000, 0x13000}, {0x15000, 0x16000}, {0x7f0000000000, 0x7f0000002000},
                          {0x7f000000f000, 0x7f0000010000}});
  return s;
}

TEST(SnapshotFileTest, RoundTripsEveryPageState) {
  const ResidencySnapshot s = Sample();
  const std::string bytes = EncodeHeader(1) + EncodeSnapshot(s) + EncodeSnapshot(s);
  auto f = ParseSnapshotFile(Bytes(bytes), "t.rss");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->clockid, 1);
  ASSERT_EQ(f->snapshots.size(), 2u);
  const ResidencySnapshot& r = f->snapshots[1];
  EXPECT_EQ(r.pid, 42u);
  EXPECT_EQ(r.time, s.time);
  EXPECT_EQ(r.end_time, s.end_time);
  EXPECT_EQ(r.reason, SnapshotReason::kStop);
  EXPECT_EQ(r.rollup_rss, s.rollup_rss);
  EXPECT_EQ(r.read.ranges(), s.read.ranges());
  EXPECT_EQ(r.present.ranges(), s.present.ranges());
  EXPECT_EQ(r.swapped.ranges(), s.swapped.ranges());
  EXPECT_EQ(r.ResidentBytes(0x10000, 0x20000), 4 * kPage);
  EXPECT_TRUE(r.Covers(0x10000, 0x20000));
  EXPECT_FALSE(r.Covers(0x10000, 0x21000));
}

TEST(SnapshotFileTest, AFullyResidentGiBCostsAFewBytes) {
  ResidencySnapshot s;
  s.pid = 1;
  s.read = RangeTally({{0x100000000, 0x140000000}});
  s.present = RangeTally({{0x100000000, 0x140000000}});
  EXPECT_LT(EncodeSnapshot(s).size(), kRecordHeaderSize + 16);
}

TEST(SnapshotFileTest, BrokenFilesSayWhereAndWhat) {
  const std::string good = EncodeHeader(1) + EncodeSnapshot(Sample());
  auto cut = ParseSnapshotFile(Bytes(good.substr(0, good.size() - 3)), "t.rss");
  ASSERT_FALSE(cut.ok());
  EXPECT_THAT(cut.status().message(), HasSubstr("t.rss: offset 32: truncated"));
  auto half_header = ParseSnapshotFile(Bytes(good.substr(0, kFileHeaderSize + 10)), "t.rss");
  EXPECT_THAT(half_header.status().message(), HasSubstr("truncated"));
  auto not_ours = ParseSnapshotFile(Bytes(std::string("PERFILE2") + good.substr(8)), "t.rss");
  EXPECT_THAT(not_ours.status().message(), HasSubstr("not a pageblame residency snapshot file"));
  // A run longer than its range.
  std::string bad = good;
  bad[kFileHeaderSize + kRecordHeaderSize + 3] = static_cast<char>(0x7f);
  auto overrun = ParseSnapshotFile(Bytes(bad), "t.rss");
  EXPECT_FALSE(overrun.ok());
  auto empty = ParseSnapshotFile(Bytes(EncodeHeader(1)), "t.rss");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->snapshots.empty());
}

TEST(AccessibleRangesTest, SkipsNoAccessRowsAndVsyscall) {
  const char* maps =
      "55d0c0a00000-55d0c0a02000 r--p 00000000 08:01 1 /bin/x\n"
      "55d0c0a02000-55d0c0a05000 r-xp 00002000 08:01 1 /bin/x\n"
      "7f0000000000-7f0000400000 ---p 00000000 00:00 0\n"
      "7f0000400000-7f0000401000 rw-p 00000000 00:00 0\n"
      "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n";
  EXPECT_EQ(AccessibleRanges(maps),
            (std::vector<PageRange>{{0x55d0c0a00000, 0x55d0c0a05000}, {0x7f0000400000, 0x7f0000401000}}));
}

// The kernel as the oracle: pages this test touches are present, pages it
// releases are not.
TEST(PagemapSamplerTest, SeesTheTouchedPagesOfThisProcess) {
  const size_t pages = 64;
  char* p = static_cast<char*>(mmap(nullptr, pages * kPage, PROT_READ | PROT_WRITE,
                                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(p, MAP_FAILED);
  for (size_t i = 0; i < pages; i += 4) p[i * kPage] = 1;
  const uint64_t a = reinterpret_cast<uint64_t>(p), b = a + pages * kPage;
  PagemapSampler sampler;
  auto s = sampler.Take(getpid(), SnapshotReason::kRequested);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(s->Covers(a, b));
  EXPECT_EQ(s->ResidentBytes(a, b), pages / 4 * kPage);
  EXPECT_LE(s->time, s->end_time);
  ASSERT_TRUE(s->rollup_rss.has_value());
  madvise(p, pages / 2 * kPage, MADV_DONTNEED);
  auto after = sampler.Take(getpid(), SnapshotReason::kRequested);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->ResidentBytes(a, b), pages / 8 * kPage);
  // PROT_NONE is never read, even when it holds resident pages.
  mprotect(p, pages * kPage, PROT_NONE);
  auto none = sampler.Take(getpid(), SnapshotReason::kRequested);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->Covers(a, b));
  EXPECT_EQ(none->ResidentBytes(a, b), 0u);
  munmap(p, pages * kPage);
  EXPECT_FALSE(sampler.Take(0x7ffffff0, SnapshotReason::kPeriodic).ok());
}

// Only the ranges asked for (and only where mappings are accessible) are
// read; their figures are those of the whole-process read.
TEST(PagemapSamplerTest, TakeWithinReadsOnlyTheRangesAskedFor) {
  const size_t pages = 64;
  char* p = static_cast<char*>(mmap(nullptr, pages * kPage, PROT_READ | PROT_WRITE,
                                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(p, MAP_FAILED);
  for (size_t i = 0; i < pages; i += 4) p[i * kPage] = 1;
  mprotect(p + 48 * kPage, 16 * kPage, PROT_NONE);  // not accessible: not read
  const uint64_t a = reinterpret_cast<uint64_t>(p), b = a + pages * kPage;
  PagemapSampler sampler;
  auto all = sampler.Take(getpid(), SnapshotReason::kRequested);
  auto within = sampler.TakeWithin(getpid(), SnapshotReason::kRequested, {{a + 8 * kPage, b}});
  ASSERT_TRUE(all.ok() && within.ok()) << within.status();
  EXPECT_EQ(within->read.total(), 40 * kPage);
  EXPECT_TRUE(within->Covers(a + 8 * kPage, a + 48 * kPage));
  EXPECT_FALSE(within->Covers(a, a + kPage));
  EXPECT_EQ(within->ResidentBytes(a + 8 * kPage, b), all->ResidentBytes(a + 8 * kPage, b));
  EXPECT_EQ(within->ResidentBytes(a + 8 * kPage, b), 10 * kPage);
  EXPECT_FALSE(within->rollup_rss.has_value()) << "smaps_rollup walks the whole process";
  munmap(p, pages * kPage);
}

// A process that has exited but is not reaped yet (a zombie: the window
// between a recorded command's exit and perf's wait) still has a /proc
// entry, empty maps and no memory: its pagemap cannot be opened (ESRCH).
// It is a process gone, not an error worth a warning (seen live: every
// `record -- dotnet ...` whose periodic snapshot met that window warned).
TEST(PagemapSamplerTest, AZombieIsAProcessGone) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  // Its /proc/PID/stat says Z once it has exited.
  for (int i = 0; i < 500; ++i) {
    std::ifstream stat("/proc/" + std::to_string(child) + "/stat");
    std::string line;
    std::getline(stat, line);
    if (line.find(") Z ") != std::string::npos) break;
    usleep(2000);
  }
  PagemapSampler sampler;
  auto s = sampler.Take(child, SnapshotReason::kPeriodic);
  waitpid(child, nullptr, 0);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::IsNotFound(s.status())) << s.status();
}

TraceFacts Facts() { return TraceFacts{1, 4000000000, {42, 43}}; }

TEST(ResidencyIndexTest, PicksTheLatestSnapshotAtOrBeforeATime) {
  std::vector<ResidencySnapshot> v;
  for (uint64_t t : {7000000000ull, 5000000000ull}) {
    ResidencySnapshot s = Sample();
    s.time = s.end_time = t;
    v.push_back(std::move(s));
  }
  auto r = ResidencyIndex::Build("t.rss", 1, std::move(v), Facts());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->At(42, 4999999999), nullptr);
  EXPECT_EQ(r->At(42, 5000000000)->time, 5000000000u);
  EXPECT_EQ(r->At(42, 6999999999)->time, 5000000000u);
  EXPECT_EQ(r->At(42, ~0ull)->time, 7000000000u);
  EXPECT_EQ(r->At(43, ~0ull), nullptr);
  EXPECT_EQ(r->Of(42).size(), 2u);
}

TEST(ResidencyIndexTest, RefusesSnapshotsOfAnotherTrace) {
  auto one = [] { return std::vector<ResidencySnapshot>{Sample()}; };
  TraceFacts perf_clock = Facts();
  perf_clock.clockid.reset();
  EXPECT_THAT(ResidencyIndex::Build("t.rss", 1, one(), perf_clock).status().message(),
              HasSubstr("perf's own clock"));
  EXPECT_THAT(ResidencyIndex::Build("t.rss", 7, one(), Facts()).status().message(),
              HasSubstr("the trace's clock is 1, the snapshots' 7"));
  TraceFacts later = Facts();
  later.first_time = 20000000000;
  EXPECT_THAT(ResidencyIndex::Build("t.rss", 1, one(), later).status().message(),
              HasSubstr("was taken before the trace began (20.000000 s)"));
  TraceFacts others = Facts();
  others.pids = {7};
  EXPECT_THAT(ResidencyIndex::Build("t.rss", 1, one(), others).status().message(),
              HasSubstr("its pids (42) are not in the trace (7)"));
}

}  // namespace
}  // namespace pageblame::residency

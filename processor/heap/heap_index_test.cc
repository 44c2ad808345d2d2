// HeapIndex on hand-made snapshot files: the trust rules residency
// snapshots follow (clock, times within the recording, the trace's pids),
// and At() picking the latest snapshot at or before a time.
#include "processor/heap/heap_index.h"

#include <ctime>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pageblame::heap {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kSecond = 1000000000;

HeapSnapshot At(uint32_t pid, uint64_t time) {
  HeapSnapshot s;
  s.pid = pid;
  s.time = time;
  s.arenas.push_back({});
  s.arenas[0].figures.system_bytes = time;  // tells the snapshots apart
  return s;
}

residency::TraceFacts Facts() {
  residency::TraceFacts f;
  f.clockid = CLOCK_MONOTONIC;
  f.first_time = 100 * kSecond;
  f.end_time = 200 * kSecond;
  f.pids = {7, 8};
  return f;
}

HeapSnapshotFile FileOf(std::vector<HeapSnapshot> v, int32_t clockid = CLOCK_MONOTONIC) {
  HeapSnapshotFile f;
  f.clockid = clockid;
  f.snapshots = std::move(v);
  return f;
}

TEST(HeapIndexTest, PicksTheLatestAtOrBefore) {
  absl::StatusOr<HeapIndex> h =
      HeapIndex::Build("t.heap", FileOf({At(7, 150 * kSecond), At(7, 120 * kSecond), At(9, 130 * kSecond)}), Facts());
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->size(), 3u);
  EXPECT_EQ(h->pids(), (std::vector<uint32_t>{7, 9}));
  EXPECT_EQ(h->At(7, 119 * kSecond), nullptr);
  EXPECT_EQ(h->At(7, 120 * kSecond)->arenas[0].figures.system_bytes, 120 * kSecond);
  EXPECT_EQ(h->At(7, 149 * kSecond)->arenas[0].figures.system_bytes, 120 * kSecond);
  EXPECT_EQ(h->At(7, ~uint64_t{0})->arenas[0].figures.system_bytes, 150 * kSecond);
  EXPECT_EQ(h->At(8, ~uint64_t{0}), nullptr);
  EXPECT_EQ(h->Of(7).size(), 2u);
  EXPECT_TRUE(h->Of(8).empty());
  // The recording reached its latest snapshot, of any pid.
  EXPECT_EQ(h->last_time(), 150 * kSecond);
}

TEST(HeapIndexTest, RefusesAnotherTracesSnapshots) {
  auto error = [](HeapSnapshotFile f, residency::TraceFacts facts = Facts()) {
    absl::StatusOr<HeapIndex> h = HeapIndex::Build("t.heap", std::move(f), facts);
    EXPECT_FALSE(h.ok());
    return std::string(h.status().message());
  };
  EXPECT_THAT(error(FileOf({At(7, 150 * kSecond)}, CLOCK_REALTIME)), HasSubstr("on clock 0, the trace on clock 1"));
  residency::TraceFacts perf_clock = Facts();
  perf_clock.clockid.reset();
  EXPECT_THAT(error(FileOf({At(7, 150 * kSecond)}), perf_clock), HasSubstr("the trace on perf's own clock"));
  EXPECT_THAT(error(FileOf({At(7, 10 * kSecond)})), HasSubstr("a snapshot of pid 7 at 10.000000 s was taken before"));
  EXPECT_THAT(error(FileOf({At(7, 500 * kSecond)})), HasSubstr("after the trace ended"));
  EXPECT_THAT(error(FileOf({At(3, 150 * kSecond), At(4, 150 * kSecond)})), HasSubstr("its pids (3, 4) are not in"));
  HeapSnapshot core = At(7, 0);
  core.time.reset();
  EXPECT_THAT(error(FileOf({core})), HasSubstr("has no time"));
  EXPECT_THAT(error(FileOf({At(7, 150 * kSecond)}, CLOCK_REALTIME)), HasSubstr("t.heap: heap snapshots of another trace"));
}

TEST(HeapIndexTest, LoadsAnEncodedFileAndSaysWhereItIsBroken) {
  const std::string bytes = EncodeHeapFileHeader(CLOCK_MONOTONIC) + EncodeHeapSnapshot(At(7, 150 * kSecond));
  absl::StatusOr<HeapSnapshotFile> f = ParseHeapSnapshotFile(
      absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), "t.heap");
  ASSERT_TRUE(f.ok()) << f.status();
  absl::StatusOr<HeapIndex> h = HeapIndex::Build("t.heap", *std::move(f), Facts());
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(*h->At(7, 160 * kSecond)->time, 150 * kSecond);
}

}  // namespace
}  // namespace pageblame::heap

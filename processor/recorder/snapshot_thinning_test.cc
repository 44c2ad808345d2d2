#include "processor/recorder/snapshot_thinning.h"

#include <vector>

#include "gtest/gtest.h"

namespace pageblame::recorder {
namespace {

constexpr uint64_t kS = SnapshotThinning::kSecond;
constexpr uint64_t kMin = 60 * kS;
constexpr uint64_t kHour = 60 * kMin;

// One record of `pid` every `every` from `from` to `to` (exclusive), each `bytes`.
void Every(std::vector<SnapshotRecordInfo>* out, uint32_t pid, uint64_t from, uint64_t to, uint64_t every,
           uint64_t bytes = 100) {
  for (uint64_t t = from; t < to; t += every) out->push_back({.pid = pid, .time = t, .bytes = bytes});
}

std::vector<uint64_t> KeptTimes(const std::vector<SnapshotRecordInfo>& r, const SnapshotThinning::Plan& p) {
  std::vector<uint64_t> out;
  for (size_t i = 0; i < r.size(); ++i) {
    if (p.keep[i]) out.push_back(r[i].time);
  }
  return out;
}

TEST(SnapshotThinningTest, KeepsTheLastHourWholeAndFewerBefore) {
  std::vector<SnapshotRecordInfo> r;
  // Three hours at one a second: the first two hours become one per 5 minutes.
  Every(&r, 7, 1 * kS, 3 * kHour + 1 * kS, kS);
  const uint64_t now = r.back().time;
  const SnapshotThinning::Plan p = SnapshotThinning::Choose(r, now, 0);
  EXPECT_EQ(p.level, 0);
  size_t last_hour = 0, older = 0;
  for (size_t i = 0; i < r.size(); ++i) {
    if (!p.keep[i]) continue;
    (now - r[i].time < kHour ? last_hour : older) += 1;
  }
  EXPECT_EQ(last_hour, 3600u);
  // 2 hours of 5-minute buckets (the bucket at the hour's edge may hold a
  // record on each side of it), the first record kept as ever.
  EXPECT_GE(older, 24u);
  EXPECT_LE(older, 26u);
  EXPECT_EQ(p.dropped, r.size() - last_hour - older);
  EXPECT_EQ(p.dropped_bytes, 100 * p.dropped);
  EXPECT_EQ(p.kept_bytes + p.dropped_bytes, 100 * r.size());
}

TEST(SnapshotThinningTest, ABudgetWidensTheBucketsUntilItFits) {
  std::vector<SnapshotRecordInfo> r;
  Every(&r, 7, 0, kHour, kS);  // all in the last hour
  const uint64_t now = r.back().time;
  const SnapshotThinning::Plan p = SnapshotThinning::Choose(r, now, 100 * 1000);
  EXPECT_LE(p.kept_bytes, 100u * 1000);
  EXPECT_GE(p.level, 1);
  // The level before would not have fitted: no more is dropped than needed
  // (widths double per level, so at least a quarter of the budget is used).
  EXPECT_GT(p.kept_bytes, 100u * 1000 / 4);
  const std::vector<uint64_t> kept = KeptTimes(r, p);
  EXPECT_EQ(kept.front(), 0u);
  EXPECT_EQ(kept.back(), now);
}

TEST(SnapshotThinningTest, FirstLastAndPinnedAreAlwaysKeptPerProcess) {
  std::vector<SnapshotRecordInfo> r;
  Every(&r, 1, 0, 10 * kHour, 10 * kS);
  Every(&r, 2, 5 * kS, 10 * kHour, 10 * kS);
  r[100].pinned = true;  // a SIGUSR1 mark of pid 1, hours old
  const uint64_t now = 10 * kHour;
  // A budget nothing but the always-kept can meet.
  const SnapshotThinning::Plan p = SnapshotThinning::Choose(r, now, 1);
  EXPECT_TRUE(p.keep[100]);
  size_t kept = 0;
  for (size_t i = 0; i < r.size(); ++i) kept += p.keep[i];
  EXPECT_EQ(kept, 5u);  // both processes' first and last, and the mark
  EXPECT_TRUE(p.keep.front());
  EXPECT_TRUE(p.keep.back());
}

TEST(SnapshotThinningTest, AKeptRecordStaysKeptAsTimePasses) {
  std::vector<SnapshotRecordInfo> r;
  Every(&r, 7, 0, 2 * kHour, 30 * kS);
  const SnapshotThinning::Plan before = SnapshotThinning::Choose(r, 2 * kHour, 0);
  const SnapshotThinning::Plan later = SnapshotThinning::Choose(r, 2 * kHour + 90 * kS, 0);
  // Records in the same bucket width keep their verdict: a thinned file is
  // not thinned again differently a minute later.
  for (size_t i = 0; i < r.size(); ++i) {
    if (2 * kHour - r[i].time > kHour + 2 * kMin) {
      EXPECT_EQ(before.keep[i], later.keep[i]) << i;
    }
  }
}

TEST(SnapshotThinningTest, Widths) {
  EXPECT_EQ(SnapshotThinning::Width(0, 0), 0u);
  EXPECT_EQ(SnapshotThinning::Width(kHour - 1, 0), 0u);
  EXPECT_EQ(SnapshotThinning::Width(kHour, 0), 5 * kMin);
  EXPECT_EQ(SnapshotThinning::Width(6 * kHour, 0), 30 * kMin);
  EXPECT_EQ(SnapshotThinning::Width(24 * kHour, 0), 2 * kHour);
  EXPECT_EQ(SnapshotThinning::Width(0, 1), kS / 100);
  EXPECT_EQ(SnapshotThinning::Width(0, 3), 4 * kS / 100);
  EXPECT_EQ(SnapshotThinning::Width(kHour, 1), 10 * kMin);
}

}  // namespace
}  // namespace pageblame::recorder

// Resident bytes as every answer prints them: a number, or "?" in text and
// null in JSON when no snapshot read them (never 0), and which snapshot
// they came from.
#include "processor/render/rss_text.h"

#include "gtest/gtest.h"
#include "processor/base/format.h"
#include "processor/index/trace_index.h"

namespace pageblame::render {
namespace {

TEST(RssTextTest, UnknownIsAQuestionMarkAndNullNeverZero) {
  EXPECT_EQ(HumanRss(std::nullopt), "?");
  EXPECT_EQ(JsonRss(std::nullopt), "null");
  EXPECT_EQ(HumanRss(0), "0 B");
  EXPECT_EQ(JsonRss(0), "0");
  EXPECT_EQ(HumanRss(uint64_t{3} << 19), HumanBytes(uint64_t{3} << 19));
  EXPECT_EQ(JsonRss(1572864), "1572864");
}

TEST(RssTextTest, TheSnapshotIsNamedWithItsAgeBeforeTheMomentAsked) {
  residency::ResidencySnapshot s;
  s.time = 12502968841000;
  s.reason = residency::SnapshotReason::kExit;
  EXPECT_EQ(DescribeSnapshot(&s, index::kEndOfTrace), "snapshot at 12502.968841, exit");
  EXPECT_EQ(DescribeSnapshot(&s, s.time + 400000000),
            "snapshot at 12502.968841, exit, 0.400 s before the moment asked");
  s.reason = residency::SnapshotReason::kPeriodic;
  EXPECT_EQ(DescribeSnapshot(&s, s.time), "snapshot at 12502.968841, periodic, 0.000 s before the moment asked");
  EXPECT_EQ(DescribeSnapshot(nullptr, s.time), "no residency snapshot of this process at or before this moment");
}

}  // namespace
}  // namespace pageblame::render

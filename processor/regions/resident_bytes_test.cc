#include "processor/regions/resident_bytes.h"

#include "gtest/gtest.h"

namespace pageblame::regions {
namespace {

constexpr uint64_t kMiB = 1 << 20;

TEST(ResidentBytesTest, WholeRowsAreExactPartsAreBounded) {
  ResidentBytes r;
  r.Add(8 * kMiB, 6 * kMiB, 8 * kMiB);  // whole
  r.Add(4 * kMiB, 0, 4 * kMiB);         // whole, nothing resident: counts as a row
  EXPECT_EQ(r.whole_rows, 2u);
  EXPECT_EQ(r.whole_bytes, 12 * kMiB);
  EXPECT_EQ(r.rss, 6 * kMiB);
  EXPECT_EQ(r.at_least(), r.at_most());

  // 3 MiB of a 4 MiB row with 1 MiB resident: the other MiB of the row may
  // hold all of it (0) or none (1 MiB).
  r.Add(4 * kMiB, 1 * kMiB, 3 * kMiB);
  // 1 MiB of a 4 MiB row with 3.5 MiB resident: at least 0.5 MiB is in the
  // part (the other 3 MiB cannot hold more), at most the part itself.
  r.Add(4 * kMiB, 3 * kMiB + kMiB / 2, 1 * kMiB);
  EXPECT_EQ(r.partly_rows, 2u);
  EXPECT_EQ(r.partly_bytes, 4 * kMiB);
  EXPECT_EQ(r.partly_at_least, kMiB / 2);
  EXPECT_EQ(r.partly_at_most, 2 * kMiB);
  EXPECT_EQ(r.at_least(), 6 * kMiB + kMiB / 2);
  EXPECT_EQ(r.at_most(), 8 * kMiB);
  EXPECT_EQ(r.rss, 6 * kMiB);  // the exact figure stays exact

  r.Add(4 * kMiB, kMiB, 0);  // no part: nothing
  EXPECT_EQ(r.partly_rows, 2u);
  EXPECT_EQ(r.whole_rows, 2u);
}

// A part whose Rss is unknown (a diff piece of a larger row) is bounded by
// 0 and its size.
TEST(ResidentBytesTest, UnknownPartsAreBoundedByTheirSize) {
  ResidentBytes r;
  r.Add(kMiB, kMiB / 2, kMiB);
  r.AddUnknown(3 * kMiB);
  r.AddUnknown(0);
  EXPECT_EQ(r.rss, kMiB / 2);
  EXPECT_EQ(r.partly_rows, 1u);
  EXPECT_EQ(r.partly_bytes, 3 * kMiB);
  EXPECT_EQ(r.at_least(), kMiB / 2);
  EXPECT_EQ(r.at_most(), kMiB / 2 + 3 * kMiB);
}

}  // namespace
}  // namespace pageblame::regions

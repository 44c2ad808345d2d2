#include "processor/regions/region_merger.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/regions/region_table_reader.h"

namespace pageblame::regions {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<Region> Rows(const std::string& list) {
  absl::StatusOr<RegionTable> t = RegionTableReader::ParseString(list, "list");
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? t->regions.ToVector() : std::vector<Region>{};
}

TEST(RegionMergerTest, RepeatedRowsCountOnce) {
  // The table: one 132 KiB range three times (405,504 bytes if added up).
  MergedRegions m = RegionMerger::Merge(Rows("0x10000-0x31000\n0x10000-0x31000\n0x10000-0x31000\n"));
  ASSERT_EQ(m.regions.size(), 1u);
  EXPECT_EQ(m.regions[0].start, 0x10000u);
  EXPECT_EQ(m.regions[0].end, 0x31000u);
  EXPECT_EQ(m.regions[0].size(), 135168u);
  EXPECT_EQ(m.regions[0].line, 1);
  EXPECT_THAT(m.regions[0].merged_lines, ElementsAre(2, 3));
  EXPECT_EQ(m.overlap_bytes, 135168u);
  EXPECT_EQ(m.overlapping_rows, 3);
  EXPECT_EQ(m.merged_regions, 1);
}

TEST(RegionMergerTest, TheWholeAddressSpaceDoesNotWrap) {
  MergedRegions m = RegionMerger::Merge(Rows("0x0-0xffffffffffffffff\n0x10000-0x31000\n"));
  ASSERT_EQ(m.regions.size(), 1u);
  EXPECT_EQ(m.regions[0].size(), 0xffffffffffffffffu);
  EXPECT_EQ(m.overlap_bytes, 135168u);
  // Twice the whole space: still one region, and the overlap is the space itself.
  m = RegionMerger::Merge(Rows("0x0-0xffffffffffffffff\n0-ffffffffffffffff\n"));
  ASSERT_EQ(m.regions.size(), 1u);
  EXPECT_EQ(m.overlap_bytes, 0xffffffffffffffffu);
}

TEST(RegionMergerTest, ChainsMergeTouchingRowsDoNot) {
  // Lines 1-3 chain (1 overlaps 2, 2 overlaps 3); line 4 only touches line 3's
  // end; line 5 lies apart. Listed out of address order.
  MergedRegions m = RegionMerger::Merge(Rows("0x3000-0x5000\n"
                                             "0x1000-0x3800\n"
                                             "0x4800-0x6000\n"
                                             "0x6000-0x7000\n"
                                             "0x0-0x1000\n"));
  ASSERT_EQ(m.regions.size(), 3u);
  // In the order of each region's first row: lines 1, 4, 5.
  EXPECT_EQ(m.regions[0].start, 0x1000u);
  EXPECT_EQ(m.regions[0].end, 0x6000u);
  EXPECT_EQ(m.regions[0].line, 1);
  EXPECT_THAT(m.regions[0].merged_lines, ElementsAre(2, 3));
  EXPECT_EQ(m.regions[1].start, 0x6000u);
  EXPECT_THAT(m.regions[1].merged_lines, IsEmpty());
  EXPECT_EQ(m.regions[2].line, 5);
  // [0x3000,0x3800) and [0x4800,0x5000) are in two rows each.
  EXPECT_EQ(m.overlap_bytes, 0x1000u);
  EXPECT_EQ(m.overlapping_rows, 3);
}

TEST(RegionMergerTest, DisjointTablesComeOutUnchanged) {
  std::vector<Region> rows = Rows("0x5000-0x6000\n0x1000-0x2000\n0x2000-0x3000\n");
  MergedRegions m = RegionMerger::Merge(rows);
  ASSERT_EQ(m.regions.size(), 3u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(m.regions[i].start, rows[i].start);
    EXPECT_EQ(m.regions[i].line, rows[i].line);
  }
  EXPECT_EQ(m.overlap_bytes, 0u);
  EXPECT_EQ(m.merged_regions, 0);
}

TEST(RegionMergerTest, KeepsTheEarliestRowsColumns) {
  absl::StatusOr<RegionTable> t = RegionTableReader::ParseString(
      "  BaseAddress EndAddress+1 RegionSize Type State Protect Usage\n"
      "+ 1`00002000 1`00003000 0`00001000 MEM_PRIVATE MEM_COMMIT PAGE_READWRITE second\n"
      "+ 1`00000000 1`00004000 0`00004000 MEM_MAPPED MEM_RESERVE PAGE_NOACCESS first\n",
      "w");
  ASSERT_TRUE(t.ok()) << t.status();
  MergedRegions m = RegionMerger::Merge(t->regions.ToVector());
  ASSERT_EQ(m.regions.size(), 1u);
  EXPECT_EQ(m.regions[0].line, 2);
  EXPECT_EQ(m.regions[0].usage, "second");
  EXPECT_EQ(m.regions[0].start, 0x100000000u);
  EXPECT_EQ(m.regions[0].end, 0x100004000u);
  EXPECT_EQ(m.overlap_bytes, 0x1000u);
}


// Rows that share bytes: their Rss would count those twice, so the merged
// region's rss is unknown; a row merged with nothing keeps its own.
TEST(RegionMergerTest, MergedRegionsHaveNoRss) {
  std::vector<Region> rows(3);
  rows[0].start = 0x10000, rows[0].end = 0x20000, rows[0].rss = 0x8000, rows[0].line = 1;
  rows[1].start = 0x18000, rows[1].end = 0x30000, rows[1].rss = 0x4000, rows[1].line = 2;
  rows[2].start = 0x40000, rows[2].end = 0x41000, rows[2].rss = 0x1000, rows[2].line = 3;
  MergedRegions m = RegionMerger::Merge(rows);
  ASSERT_EQ(m.regions.size(), 2u);
  EXPECT_FALSE(m.regions[0].rss.has_value());
  EXPECT_EQ(m.regions[1].rss, 0x1000u);
}

}  // namespace
}  // namespace pageblame::regions

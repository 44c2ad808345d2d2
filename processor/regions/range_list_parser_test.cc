#include "processor/regions/range_list_parser.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/regions/region_table_reader.h"

namespace pageblame::regions {
namespace {

using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::StartsWith;

TEST(RangeListParserTest, AddressesAndRanges) {
  absl::StatusOr<RegionTable> t = RegionTableReader::ParseString(
      "# pages to watch\n"
      "0x78e8c18e7000\n"
      "78e8fcafe123   # inside a page\n"
      "\n"
      "7d18`98000000-7d18`98135000\n"
      "0x1000,0x3000\n"
      "0x1000 0x3000\n"
      "0x5000 - 0x6000\n",
      "list");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->format, "ranges");
  EXPECT_FALSE(t->has_state);
  ASSERT_EQ(t->regions.size(), 6u);
  EXPECT_EQ(t->regions[0].line, 2);
  EXPECT_EQ(t->regions[0].start, 0x78e8c18e7000u);
  EXPECT_EQ(t->regions[0].end, 0x78e8c18e8000u);
  EXPECT_EQ(t->regions[1].start, 0x78e8fcafe000u);
  EXPECT_EQ(t->regions[1].end, 0x78e8fcaff000u);
  EXPECT_EQ(t->regions[2].start, 0x7d1898000000u);
  EXPECT_EQ(t->regions[2].end, 0x7d1898135000u);
  EXPECT_EQ(t->regions[3].size(), 0x2000u);
  EXPECT_EQ(t->regions[4].size(), 0x2000u);
  EXPECT_EQ(t->regions[5].start, 0x5000u);
  EXPECT_EQ(t->regions[5].line, 8);
}

TEST(RangeListParserTest, ParseEntry) {
  EXPECT_THAT(*RangeListParser::ParseEntry("0x10-0x20"), Pair(0x10, 0x20));
  EXPECT_THAT(*RangeListParser::ParseEntry("fff"), Pair(0x0, 0x1000));
  EXPECT_FALSE(RangeListParser::ParseEntry("fffffffffffff123").ok());  // page past 2^64
  for (const char* bad : {"0x20-0x10", "0x10-0x10", "0x10-", "0x10 0x20 0x30", "0x10--0x20",
                          "zz", "0x10-zz", ""}) {
    EXPECT_FALSE(RangeListParser::ParseEntry(bad).ok()) << bad;
  }
  EXPECT_THAT(std::string(RangeListParser::ParseEntry("0x20-0x10").status().message()),
              HasSubstr("END must be above START (END is exclusive)"));
}

TEST(RangeListParserTest, SignatureIsTheFormNotTheOrder) {
  // A reversed range has the form of an entry, so a list with one is
  // detected as a list and the error names its line.
  EXPECT_TRUE(RangeListParser::LooksLikeEntry("0x20-0x10"));
  EXPECT_TRUE(RangeListParser::LooksLikeEntry("fffffffffffff123"));
  EXPECT_FALSE(RangeListParser::LooksLikeEntry("0x10-"));
  EXPECT_FALSE(RangeListParser::LooksLikeEntry("# only a comment"));
  EXPECT_TRUE(RangeListParser::StartsLikeEntry("0x10 0x20 0x30"));
  EXPECT_FALSE(RangeListParser::StartsLikeEntry("hello 0x10"));
}

TEST(RangeListParserTest, AnyBadLineIsAnError) {
  absl::StatusOr<RegionTable> t =
      RangeListParser::Parse(TextLines("list", "0x1000\n0x2000-\n0x3000\n"));
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), StartsWith("list:2: expected an address"));
  t = RangeListParser::Parse(TextLines("list", "# nothing\n\n"));
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), StartsWith("list: no addresses"));
}

}  // namespace
}  // namespace pageblame::regions

#include "processor/regions/sos_maddress_parser.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/regions/region_table_reader.h"

namespace pageblame::regions {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kBorder[] = " +----------------------------------------------------------+ \r\n";
constexpr char kHeader[] =
    " | Memory Kind | StartAddr | EndAddr-1 | Size | Type | State | Protect | Image | \r\n";
constexpr char kRow1[] =
    " | Image | 569d3bd6e000 | 569d3bd7a000 | 48,00kb | MEM_IMAGE | MEM_COMMIT | PAGE_READONLY "
    "| dotnet | \r\n";
constexpr char kRow2[] =
    " | HighFrequencyHeap | 78e84b3a0000 | 78e84b3b0000 | 64.00kb | MEM_PRIVATE | MEM_COMMIT | "
    "PAGE_READWRITE |  | \r\n";

absl::StatusOr<RegionTable> Parse(const std::string& text) {
  return SosMaddressParser::Parse(TextLines("m.output", text));
}

// Facts checked independently with Python on the raw file: 3469 rows on
// lines 4..3472, 3345 MEM_COMMIT rows covering 610676736 bytes, 124
// MEM_UNKNOWN rows, every EndAddr-1 page- or sub-page-aligned, none ...fff.
TEST(SosMaddressParserTest, PeerSample) {
  absl::StatusOr<RegionTable> t = RegionTableReader::DetectAndParse(
      absl::StrCat(PAGEBLAME_SOURCE_DIR, "/processor/regions/testdata/sos-maddress.output"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->format, "sos-maddress");
  EXPECT_EQ(t->skipped, 0);
  ASSERT_EQ(t->regions.size(), 3469u);
  int committed = 0, unknown = 0;
  uint64_t committed_bytes = 0;
  for (const Region& r : t->regions) {
    if (t->IsCommitted(r)) {
      ++committed;
      committed_bytes += r.size();
    }
    if (r.state == "MEM_UNKNOWN") ++unknown;
  }
  EXPECT_EQ(committed, 3345);
  EXPECT_EQ(committed_bytes, 610676736u);
  EXPECT_EQ(unknown, 124);
  const Region& first = t->regions.front();
  EXPECT_EQ(first.line, 4);
  EXPECT_EQ(first.start, 0x569d3bd6e000u);
  EXPECT_EQ(first.end, 0x569d3bd7a000u);  // exclusive: 48 KiB, as the Size column says
  EXPECT_EQ(first.type, "MEM_IMAGE");
  EXPECT_EQ(first.state, "MEM_COMMIT");
  EXPECT_EQ(first.protect, "PAGE_READONLY");
  EXPECT_EQ(first.usage, "Image [dotnet]");
  const Region& last = t->regions.back();
  EXPECT_EQ(last.line, 3472);
  EXPECT_EQ(last.start, 0x7ffe51fe2000u);
  EXPECT_EQ(last.usage, "PAGE_EXECUTE_READ");
}

TEST(SosMaddressParserTest, EitherDecimalSeparator) {
  absl::StatusOr<RegionTable> t =
      Parse(absl::StrCat(kBorder, kHeader, kBorder, kRow1, kRow2, kBorder));
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->regions.size(), 2u);
  EXPECT_EQ(t->regions[1].size(), 0x10000u);
  EXPECT_EQ(t->regions[1].usage, "HighFrequencyHeap");
}

TEST(SosMaddressParserTest, CheckSize) {
  EXPECT_TRUE(SosMaddressParser::CheckSize("48,00kb", 48 * 1024).ok());
  EXPECT_TRUE(SosMaddressParser::CheckSize("48.00kb", 48 * 1024).ok());
  EXPECT_TRUE(SosMaddressParser::CheckSize("1,21mb", 0x135000).ok());  // 1.207 MiB
  EXPECT_TRUE(SosMaddressParser::CheckSize("6,14mb", 0x623000).ok());
  EXPECT_TRUE(SosMaddressParser::CheckSize("2,50GB", 2684354560u).ok());
  EXPECT_FALSE(SosMaddressParser::CheckSize("1,22mb", 0x135000).ok());
  EXPECT_FALSE(SosMaddressParser::CheckSize("52,00kb", 48 * 1024).ok());
  EXPECT_FALSE(SosMaddressParser::CheckSize("48kb", 47 * 1024).ok());
  for (const char* bad : {"", "kb", "48,00", "48,00xb", "4,8,00kb", "-1kb"})
    EXPECT_FALSE(SosMaddressParser::CheckSize(bad, 48 * 1024).ok()) << bad;
}

TEST(SosMaddressParserTest, StructureErrors) {
  struct Case {
    std::string text;
    const char* message;
  } cases[] = {
      {"", "m.output: no SOS maddress table"},
      {absl::StrCat(kHeader, kBorder, kRow1, kBorder), "m.output:1: maddress header without the top border"},
      {absl::StrCat(kBorder, kHeader, kRow1, kBorder), "m.output:3: expected the border '+---+' under"},
      // truncated: no bottom border
      {absl::StrCat(kBorder, kHeader, kBorder, kRow1, kRow2), "m.output:5: maddress table not closed"},
      // a row that lost its right border
      {absl::StrCat(kBorder, kHeader, kBorder,
                    " | Image | 569d3bd6e000 | 569d3bd7a000 | 48,00kb | MEM_IMAGE | MEM_COMMIT\n",
                    kBorder),
       "m.output:4: expected a row '| Memory Kind | StartAddr"},
      // wrong cell count
      {absl::StrCat(kBorder, kHeader, kBorder,
                    " | Image | 569d3bd6e000 | 569d3bd7a000 | 48,00kb | MEM_IMAGE | |\n", kBorder),
       "m.output:4: expected 8 cells as in the header (line 2), got 6"},
      {absl::StrCat(kBorder, kHeader, kBorder,
                    " | Image | 569d3bd6e00g | 569d3bd7a000 | 48,00kb | MEM_IMAGE | MEM_COMMIT | "
                    "PAGE_READONLY | dotnet |\n", kBorder),
       "m.output:4: bad address '569d3bd6e00g'"},
      // Size disagreeing with the bounds
      {absl::StrCat(kBorder, kHeader, kBorder,
                    " | Image | 569d3bd6e000 | 569d3bd7a000 | 44,00kb | MEM_IMAGE | MEM_COMMIT | "
                    "PAGE_READONLY | dotnet |\n", kBorder),
       "m.output:4: Size '44,00kb' does not match"},
      {absl::StrCat(kBorder, kHeader, kBorder, kRow1, "\n", kRow2, kBorder),
       "m.output:5: blank line inside the maddress table"},
      {absl::StrCat(kBorder, kHeader, kBorder, kBorder), "m.output:2: maddress table has no rows"},
      // a column named twice (issue 44): which cell is the end is a guess
      {absl::StrCat(kBorder,
                    " | Memory Kind | StartAddr | EndAddr-1 | Size | Type | State | Protect | EndAddr | \r\n",
                    kBorder, kRow1, kBorder),
       "m.output:2: maddress header has two 'EndAddr' columns (cells 3 and 8)"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<RegionTable> t = Parse(c.text);
    ASSERT_FALSE(t.ok()) << c.text;
    EXPECT_THAT(std::string(t.status().message()), StartsWith(c.message)) << c.text;
  }
}

TEST(SosMaddressParserTest, TextAroundTheTableIsCountedNotParsed) {
  absl::StatusOr<RegionTable> t = Parse(absl::StrCat(
      "0:000> !maddress -list\n", kBorder, kHeader, kBorder, kRow1, kBorder, "\n",
      kBorder, " | Region Type | Count | Size | Size (bytes) |\n", kBorder,
      " | Image | 433 | 183,52mb | 192,434,176 |\n", kBorder));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->regions.size(), 1u);
  EXPECT_EQ(t->skipped, 6);
  EXPECT_THAT(t->skip_reasons[0], StartsWith("1: before the maddress table"));
  EXPECT_THAT(t->skip_reasons[1], HasSubstr("after the end of the maddress table"));
}

}  // namespace
}  // namespace pageblame::regions

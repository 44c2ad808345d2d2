#include "processor/regions/page_diff_output_parser.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/regions/region_table_reader.h"

namespace pageblame::regions {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// The seed readme's example result (abridged second section).
constexpr char kResult[] =
    "Memory regions found by sos maddress command: 3469\n"
    "Memory regions found by windbg address command: 3452\n"
    "After distinct: 353\n"
    "Memory regions found by windbg address but not by sos maddress: 7\n"
    "78e13f400000 - 78e145b1b000 Size: 103MB    Type: MEM_PRIVATE  State: MEM_COMMIT   Protection: PAGE_READWRITE           Kind: <unknown>            Usage: [........0.......]\n"
    "78e15bc00000 - 78e15c6b5000 Size: 10MB     Type: MEM_PRIVATE  State: MEM_COMMIT   Protection: PAGE_READWRITE           Kind: <unknown>            Usage: [................]\n"
    "78e14bc00000 - 78e152a22000 Size: 110MB    Type: MEM_PRIVATE  State: MEM_COMMIT   Protection: PAGE_READWRITE           Kind: <unknown>            Usage: [..........1.....]\n"
    "78e12cc00000 - 78e13f310000 Size: 295MB    Type: MEM_PRIVATE  State: MEM_COMMIT   Protection: PAGE_READWRITE           Kind: <unknown>            Usage: [................]\n"
    "78e848ec0000 - 78e848ed1000 Size: 68KB     Type: MEM_PRIVATE  State: MEM_COMMIT   Protection: PAGE_EXECUTE_WRITECOPY   Kind: <unknown>            Usage: [P.O..V..........]\n"
    "78e154800000 - 78e15ba31000 Size: 114MB    Type: MEM_PRIVATE  State: MEM_COMMIT   Protection: PAGE_READWRITE           Kind: <unknown>            Usage: [................]\n"
    "78e12a000000 - 78e12c713000 Size: 39MB     Type: MEM_PRIVATE  State: MEM_COMMIT   Protection: PAGE_READWRITE           Kind: <unknown>            Usage: [................]\n"
    "Total unaccounted size: 672MB\n"
    "Memory regions found by sos maddress but not by windbg address: 370\n"
    "78e84b3a0000 - 78e84b3b0000 Size: 64KB     Type: MEM_PRIVATE  State: MEM_COMMIT   Protection: PAGE_READWRITE           Kind: HighFrequencyHeap    Usage: \n"
    "78e849ebaa00 - 78e849ebb000 Size: 1KB      Type: MEM_PRIVATE  State: MEM_COMMIT   Protection: PAGE_READONLY            Kind: PAGE_READONLY        Usage: \n"
    "78e8bebcd000 - 78e8bebcf000 Size: 8KB      Type: MEM_IMAGE    State: MEM_COMMIT   Protection: PAGE_READONLY            Kind: Image                Usage: System_Security_Cryptography_Encoding\n"
    "[... truncated ...]\n";

TEST(PageDiffOutputParserTest, ReadsTheUnaccountedSection) {
  absl::StatusOr<RegionTable> t = RegionTableReader::ParseString(kResult, "diff.txt");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->format, "page-diff");
  ASSERT_EQ(t->regions.size(), 7u);
  uint64_t total = 0;
  for (const Region& r : t->regions) total += r.size();
  EXPECT_EQ(total / (1 << 20), 672u);  // the seed's "Total unaccounted size: 672MB"
  const Region& r = t->regions[0];
  EXPECT_EQ(r.line, 5);
  EXPECT_EQ(r.start, 0x78e13f400000u);
  EXPECT_EQ(r.end, 0x78e145b1b000u);
  EXPECT_EQ(r.type, "MEM_PRIVATE");
  EXPECT_EQ(r.state, "MEM_COMMIT");
  EXPECT_EQ(r.protect, "PAGE_READWRITE");
  EXPECT_EQ(r.usage, "<unknown> [........0.......]");  // as the WinDbg parser spells it
  EXPECT_EQ(t->regions[4].protect, "PAGE_EXECUTE_WRITECOPY");
  // Three rows of the reverse section and the "[... truncated ...]" line.
  EXPECT_EQ(t->skipped, 4);
  EXPECT_THAT(t->skip_reasons[0], StartsWith("14: in the section 'Memory regions found by sos "
                                             "maddress but not by windbg address'"));
}

TEST(PageDiffOutputParserTest, RowsWithoutTitlesAndUsageSpelling) {
  absl::StatusOr<RegionTable> t = PageDiffOutputParser::Parse(TextLines(
      "d.txt",
      "78e8bebcd000 - 78e8bebcf000 Size: 8KB      Type: MEM_IMAGE    State: MEM_COMMIT   "
      "Protection: PAGE_READONLY            Kind: Image                Usage: System_Linq\n"
      "78e849ebaa00 - 78e849ebb000 Size: 1KB      Type: MEM_PRIVATE  State: MEM_COMMIT   "
      "Protection: PAGE_READONLY            Kind: PAGE_READONLY        Usage:\n"));
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->regions.size(), 2u);
  EXPECT_EQ(t->regions[0].usage, "Image [System_Linq]");
  EXPECT_EQ(t->regions[1].usage, "PAGE_READONLY");
  EXPECT_EQ(t->regions[1].size(), 0x600u);  // 1.5 KiB prints as the seed's "1KB"
}

TEST(PageDiffOutputParserTest, MalformedRows) {
  struct Case {
    const char* row;
    const char* message;
  } cases[] = {
      {"78e13f400000 - 78e145b1b000 Size: 103MB    Type: MEM_PRIVATE  State: MEM_CO",
       "d.txt:1: expected 'START - END Size:"},
      {"78e13f400000 - 78e145b1b000 Size: 104MB    Type: MEM_PRIVATE  State: MEM_COMMIT   "
       "Protection: PAGE_READWRITE Kind: <unknown> Usage: [....]",
       "d.txt:1: Size '104MB' does not match END - START = 108113920 bytes"},
      {"78e13f400000 - 78e13f400000 Size: 0B    Type: MEM_PRIVATE  State: MEM_COMMIT   "
       "Protection: PAGE_READWRITE Kind: <unknown> Usage: [....]",
       "d.txt:1: END 0x78e13f400000 is not above START"},
      {"78e13f400000 - 78e1zz400000 Size: 1MB Type: A State: B Protection: C Kind: D Usage: E",
       "d.txt:1: bad address '78e1zz400000'"},
      {"Nothing to see here", "d.txt: no page-diff result rows found"},
      {"78e13f400000", "d.txt:1: expected 'START - END Size:"},  // cut after START
  };
  for (const Case& c : cases) {
    absl::StatusOr<RegionTable> t = PageDiffOutputParser::Parse(TextLines("d.txt", c.row));
    ASSERT_FALSE(t.ok()) << c.row;
    EXPECT_THAT(std::string(t.status().message()), HasSubstr(c.message)) << c.row;
  }
}

}  // namespace
}  // namespace pageblame::regions

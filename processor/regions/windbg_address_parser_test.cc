#include "processor/regions/windbg_address_parser.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/regions/region_table_reader.h"

namespace pageblame::regions {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kHeader[] =
    "        BaseAddress      EndAddress+1        RegionSize     Type       State"
    "                 Protect             Usage\n"
    "----------------------------------------------------------------------------\n";

absl::StatusOr<RegionTable> Parse(const std::string& body) {
  return WindbgAddressParser::Parse(TextLines("a.output", absl::StrCat(kHeader, body)));
}

std::string SamplePath() {
  return absl::StrCat(PAGEBLAME_SOURCE_DIR, "/processor/regions/testdata/windbg-address.output");
}

// Facts checked independently with Python on the raw file (see docs/regions.md):
// 3506 rows on lines 3..3508, 3037 with MEM_COMMIT summing to 1266458624
// bytes of RegionSize, 469 free rows (no state), 122 rows without '+'.
TEST(WindbgAddressParserTest, PeerSample) {
  absl::StatusOr<RegionTable> t = RegionTableReader::DetectAndParse(SamplePath());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->format, "windbg-address");
  EXPECT_TRUE(t->has_state);
  EXPECT_EQ(t->skipped, 0);
  ASSERT_EQ(t->regions.size(), 3506u);
  int committed = 0, free_rows = 0;
  uint64_t committed_bytes = 0;
  for (const Region& r : t->regions) {
    if (t->IsCommitted(r)) {
      ++committed;
      committed_bytes += r.size();
    }
    if (r.state.empty()) ++free_rows;
  }
  EXPECT_EQ(committed, 3037);
  EXPECT_EQ(committed_bytes, 1266458624u);
  EXPECT_EQ(free_rows, 469);

  const Region& first = t->regions[0];  // "+ 0`00000000 569d`3bd6e000 ... <unknown>"
  EXPECT_EQ(first.line, 3);
  EXPECT_EQ(first.start, 0u);
  EXPECT_EQ(first.end, 0x569d3bd6e000u);
  EXPECT_EQ(first.state, "");
  EXPECT_EQ(first.usage, "<unknown>");

  const Region& image = t->regions[1];  // line 4
  EXPECT_EQ(image.line, 4);
  EXPECT_EQ(image.start, 0x569d3bd6e000u);
  EXPECT_EQ(image.end, 0x569d3bd7a000u);
  EXPECT_EQ(image.type, "MEM_PRIVATE");
  EXPECT_EQ(image.state, "MEM_COMMIT");
  EXPECT_EQ(image.protect, "PAGE_READONLY");
  EXPECT_EQ(image.usage, "Image [dotnet; \"/usr/share/dotnet/dotnet\"]");

  // Line 155: no '+', a bound inside a page.
  const Region& split = t->regions[155 - 3];
  EXPECT_EQ(split.line, 155);
  EXPECT_EQ(split.start, 0x78e116162800u);
  EXPECT_EQ(split.end, 0x78e116294000u);
  EXPECT_EQ(split.usage, "<unknown> [................]");

  // The last line has no trailing newline.
  EXPECT_EQ(t->regions.back().line, 3508);
  EXPECT_EQ(t->regions.back().end, 0x7ffe51fe3000u);
}

TEST(WindbgAddressParserTest, RowShapes) {
  absl::StatusOr<RegionTable> t = Parse(
      "+     7d18`98000000     7d18`98135000        0`00135000 MEM_PRIVATE MEM_COMMIT  "
      "PAGE_READWRITE                     <unknown>  [0...............]\r\n"
      "      7d18`98135000     7d18`98136000        0`00001000 MEM_PRIVATE MEM_COMMIT  "
      "PAGE_READWRITE | PAGE_GUARD        Stack      [~12; 1234.1234]\n"
      "+     7d18`98136000     7d18`98200000        0`000ca000 MEM_PRIVATE MEM_RESERVE"
      "                                    <unknown>\n"
      "+     78e1`16113000     78e1`16114000        0`00001000                                "
      "            Image      [System_Reflection_Metadata; \"/x/System.Reflection.Metadata.dll\"]\n"
      "+     7ffe`00000000     7ffe`00010000        0`00010000             MEM_FREE    "
      "PAGE_NOACCESS                      Free\n");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->regions.size(), 5u);
  EXPECT_EQ(t->regions[0].usage, "<unknown> [0...............]");
  EXPECT_EQ(t->regions[1].protect, "PAGE_READWRITE | PAGE_GUARD");
  EXPECT_EQ(t->regions[1].usage, "Stack [~12; 1234.1234]");
  EXPECT_EQ(t->regions[2].type, "MEM_PRIVATE");
  EXPECT_EQ(t->regions[2].state, "MEM_RESERVE");
  EXPECT_EQ(t->regions[2].protect, "");
  EXPECT_FALSE(t->IsCommitted(t->regions[2]));
  EXPECT_TRUE(t->IsClaimed(t->regions[2]));
  EXPECT_EQ(t->regions[3].state, "");
  EXPECT_EQ(t->regions[3].usage,
            "Image [System_Reflection_Metadata; \"/x/System.Reflection.Metadata.dll\"]");
  EXPECT_FALSE(t->IsClaimed(t->regions[3]));
  EXPECT_EQ(t->regions[4].type, "");
  EXPECT_EQ(t->regions[4].state, "MEM_FREE");
  EXPECT_FALSE(t->IsClaimed(t->regions[4]));
}

TEST(WindbgAddressParserTest, PromptsAndSummaryAreCountedSkips) {
  absl::StatusOr<RegionTable> t = WindbgAddressParser::Parse(TextLines(
      "a.output",
      absl::StrCat("0:000> !address\n", kHeader,
                   "+     7d18`98000000     7d18`98135000        0`00135000 MEM_PRIVATE "
                   "MEM_COMMIT  PAGE_READWRITE  <unknown>\n"
                   "\n--- Usage Summary ---------------- RgnCount ----------- Total Size\n"
                   "<unknown>                               3161      7ffe`3ea7c000\n"
                   "add more text\n")));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->regions.size(), 1u);
  EXPECT_EQ(t->regions[0].line, 4);
  EXPECT_EQ(t->skipped, 4);  // "add" is hex, but not followed by an address
  ASSERT_EQ(t->skip_reasons.size(), 4u);
  EXPECT_THAT(t->skip_reasons[0], StartsWith("1: not a region row"));
}

TEST(WindbgAddressParserTest, MalformedRowsAreErrorsWithFileAndLine) {
  struct Case {
    const char* row;
    const char* message;
  } cases[] = {
      // truncated copy: the row stops inside EndAddress+1
      {"+     7d18`98000000     7d18`98", "a.output:3: expected 'BaseAddress EndAddress+1 RegionSize"},
      // wrong column count: RegionSize missing
      {"+     7d18`98000000     7d18`98135000 MEM_PRIVATE MEM_COMMIT PAGE_READWRITE <unknown>",
       "a.output:3: expected 'BaseAddress EndAddress+1 RegionSize"},
      {"+     7d18`9800z000     7d18`98135000        0`00135000", "not hexadecimal"},
      {"+     7d18`98000000     7d18`98135000        0`00136000 MEM_PRIVATE MEM_COMMIT",
       "a.output:3: RegionSize 0x136000 != EndAddress+1 - BaseAddress = 0x135000"},
      {"+     7d18`98135000     7d18`98000000        0`00135000", "is not above BaseAddress"},
      {"+     7d18`98000000     7d18`98135000        0`00135000 MEM_PRIVATE MEM_COMMITTED",
       "unknown State 'MEM_COMMITTED'"},
      {"+ zz", "a.output:3: expected 'BaseAddress"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<RegionTable> t = Parse(absl::StrCat(c.row, "\n"));
    ASSERT_FALSE(t.ok()) << c.row;
    EXPECT_THAT(std::string(t.status().message()), HasSubstr(c.message)) << c.row;
  }
}

TEST(WindbgAddressParserTest, BadHeaderAndEmptyTable) {
  absl::StatusOr<RegionTable> t = WindbgAddressParser::Parse(
      TextLines("a.output", "  BaseAddress EndAddress+1 Size Type State Protect Usage\n"));
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), StartsWith("a.output:1: expected 'BaseAddress"));
  t = Parse("");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("no WinDbg !address rows"));
}

TEST(WindbgAddressParserTest, OldHeaderSpellingAndNoHeader) {
  absl::StatusOr<RegionTable> t = WindbgAddressParser::Parse(TextLines(
      "a.output",
      "  BaseAddr EndAddr+1 RgnSize     Type       State                 Protect  Usage\n"
      "00400000 00401000  00001000 MEM_IMAGE   MEM_COMMIT  PAGE_READONLY   Image\n"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->regions[0].type, "MEM_IMAGE");
  t = WindbgAddressParser::Parse(TextLines(
      "a.output", "+ 7d18`98000000 7d18`98001000 0`00001000 MEM_PRIVATE MEM_COMMIT PAGE_READWRITE\n"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->regions[0].size(), 0x1000u);
}

}  // namespace
}  // namespace pageblame::regions

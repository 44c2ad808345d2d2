#include "processor/regions/pmap_parser.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/regions/region_table_reader.h"

namespace pageblame::regions {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// pmap -XX on a 6.x kernel: it has Pss_Dirty and KSM, which the peer
// sample's kernel lacks, so Size is not where a fixed layout would look
// for VmFlags.
constexpr char kXXHeader[] =
    "2655:   bash /dev/fd/3\n"
    "         Address Perm   Offset Device  Inode Size KernelPageSize MMUPageSize  Rss Pss "
    "Pss_Dirty Shared_Clean Shared_Dirty Private_Clean Private_Dirty Referenced Anonymous KSM "
    "LazyFree AnonHugePages ShmemPmdMapped FilePmdMapped Shared_Hugetlb Private_Hugetlb Swap "
    "SwapPss Locked THPeligible              VmFlags Mapping\n";
constexpr char kXXRows[] =
    "    55d7d2a69000 r--p 00000000  fe:00 247101  188              4           4  188  37    "
    "     0          188            0             0             0        188         0   0    "
    "    0             0              0             0              0               0    0     "
    "  0      0           0          rd mr mw me bash\n"
    "    7f0000000000 rw-s 00000000  00:01   1033  132              4           4    0   0    "
    "     0            0            0             0             0          0         0   0    "
    "    0             0              0             0              0               0    0     "
    "  0      0           0          rd wr sh mr mw me ms memfd:doublemapper (deleted)\n"
    "    7f0000100000 rw-p 00000000  00:00      0    8              4           4    8   8    "
    "     8            0            0             0             8          8         8   0    "
    "    0             0              0             0              0               0    0     "
    "  0      0           0          rd wr mr mw me ac\n"
    "                                             ==== ============== =========== ==== === \n"
    "                                              328            12          12  196  45 KB \n";

TEST(PmapParserTest, HeaderDrivenXX) {
  absl::StatusOr<RegionTable> t =
      RegionTableReader::ParseString(absl::StrCat(kXXHeader, kXXRows), "p.txt");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->format, "pmap");
  EXPECT_FALSE(t->has_state);
  EXPECT_EQ(t->skipped, 0);  // pid line, footer and totals are structure, not skips
  ASSERT_EQ(t->regions.size(), 3u);
  EXPECT_EQ(t->regions[0].line, 3);
  EXPECT_EQ(t->regions[0].start, 0x55d7d2a69000u);
  EXPECT_EQ(t->regions[0].end, 0x55d7d2a69000u + 188 * 1024);
  EXPECT_EQ(t->regions[0].protect, "r--p");
  EXPECT_EQ(t->regions[0].usage, "bash");
  EXPECT_EQ(t->regions[1].usage, "memfd:doublemapper (deleted)");
  EXPECT_EQ(t->regions[1].protect, "rw-s");
  EXPECT_EQ(t->regions[2].usage, "");
  EXPECT_EQ(t->regions[2].size(), 8u * 1024);
}

TEST(PmapParserTest, HeaderDrivenXWithNumericMappingName) {
  absl::StatusOr<RegionTable> t = PmapParser::Parse(TextLines(
      "p.txt",
      "         Address Perm   Offset Device  Inode Size  Rss Pss Pss_Dirty Referenced Anonymous "
      "KSM LazyFree ShmemPmdMapped FilePmdMapped Shared_Hugetlb Private_Hugetlb Swap SwapPss "
      "Locked THPeligible Mapping\n"
      "    55d7d2a69000 r--p 00000000  fe:00 247101  188  188  37         0        188         0"
      "   0        0              0             0              0               0    0       0   "
      "   0           0 12345\n"));
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->regions.size(), 1u);
  EXPECT_EQ(t->regions[0].usage, "12345");
  EXPECT_EQ(t->regions[0].size(), 188u * 1024);
}

TEST(PmapParserTest, PmapLowerXLayout) {
  absl::StatusOr<RegionTable> t = RegionTableReader::ParseString(
      "2655:   bash\n"
      "Address           Kbytes     RSS   Dirty Mode  Mapping\n"
      "000055d7d2a69000     188     188       0 r---- bash\n"
      "---------------- ------- ------- -------\n"
      "total kB            5012    3976     936\n",
      "p.txt");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->regions.size(), 1u);
  EXPECT_EQ(t->regions[0].start, 0x55d7d2a69000u);
  EXPECT_EQ(t->regions[0].protect, "r----");
  EXPECT_EQ(t->regions[0].usage, "bash");
}

// Facts checked independently with awk on the raw file (pmap -XX -q, no
// header): 4150 rows on lines 2..4151, Size column summing to 275031172 KiB,
// 3538 rows mapping "memfd:doublemapper (deleted)", [heap] on line 6
// (2580 KiB), [stack] on line 4149 (132 KiB).
TEST(PmapParserTest, PeerSampleHeaderless) {
  absl::StatusOr<RegionTable> t = RegionTableReader::DetectAndParse(
      absl::StrCat(PAGEBLAME_SOURCE_DIR, "/processor/regions/testdata/pmap-XX.output"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->format, "pmap");
  EXPECT_EQ(t->skipped, 0);
  ASSERT_EQ(t->regions.size(), 4150u);
  uint64_t bytes = 0;
  int doublemapped = 0;
  for (const Region& r : t->regions) {
    bytes += r.size();
    if (r.usage == "memfd:doublemapper (deleted)") ++doublemapped;
  }
  EXPECT_EQ(bytes, uint64_t{275031172} * 1024);
  EXPECT_EQ(doublemapped, 3538);
  EXPECT_EQ(t->regions.front().line, 2);
  EXPECT_EQ(t->regions.front().start, 0x5585e95a2000u);
  EXPECT_EQ(t->regions.front().size(), 48u * 1024);
  EXPECT_EQ(t->regions.front().protect, "r--p");
  EXPECT_EQ(t->regions.front().usage, "dotnet");
  const Region& heap = t->regions[6 - 2];
  EXPECT_EQ(heap.usage, "[heap]");
  EXPECT_EQ(heap.start, 0x5585e97c6000u);
  EXPECT_EQ(heap.size(), 2580u * 1024);
  EXPECT_EQ(t->regions[4149 - 2].usage, "[stack]");
  EXPECT_EQ(t->regions[4149 - 2].size(), 132u * 1024);
}

TEST(PmapParserTest, Errors) {
  std::string second_process = absl::StrCat(kXXHeader, kXXRows, kXXHeader, kXXRows);
  absl::StatusOr<RegionTable> t = PmapParser::Parse(TextLines("p.txt", second_process));
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), StartsWith("p.txt:8: pmap output of a second process"));

  // Headerless row cut short after a few numeric fields: the file's rows
  // have 4 numeric fields, this one 2.
  t = PmapParser::Parse(TextLines(
      "p.txt",
      "5585e95a2000 r--p 00000000  08:01  915517   48  4  4  48  rd mr dotnet\n"
      "5585e95ae000 r-xp 0000c000  08:01  915517   88  4  4  80  rd ex dotnet\n"
      "5585e95c4000 r--p 00022000  08:01  915517    4  4\n"));
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()),
              StartsWith("p.txt:3: expected 'Address Perm Offset Device Inode Size +3 fields"));

  // With a header: a row with too few columns, a bad perm, a bad size.
  const char* header = "Address Perm Offset Device Inode Size Rss Mapping\n";
  struct Case {
    const char* row;
    const char* message;
  } cases[] = {
      {"55d7d2a69000 r--p 00000000 fe:00 247101\n", "p.txt:2: expected 'Address Perm Offset "
                                                    "Device Inode Size Rss Mapping' (7 columns, "
                                                    "found 5)"},
      {"55d7d2a69000 rwzp 00000000 fe:00 247101 188 188 bash\n", "bad Perm 'rwzp'"},
      {"55d7d2a69000 r--p 00000000 fe:00 247101 1x8 188 bash\n", "bad Size '1x8'"},
      {"55d7d2a69000 r--p 00000000 fe:00 247101 0 0 bash\n", "is empty or runs past 2^64"},
      {"55d7d2a69000 r--p 00000000 fe:00 247101 3 3 bash\n",
       "p.txt:2: 0x55d7d2a69000, 3 KiB is not page-aligned"},
      {"55d7d2a69800 r--p 00000000 fe:00 247101 4 4 bash\n", "p.txt:2: 0x55d7d2a69800, 4 KiB"},
  };
  for (const Case& c : cases) {
    t = PmapParser::Parse(TextLines("p.txt", absl::StrCat(header, c.row)));
    ASSERT_FALSE(t.ok()) << c.row;
    EXPECT_THAT(std::string(t.status().message()), HasSubstr(c.message)) << c.row;
  }
  t = PmapParser::Parse(TextLines("p.txt", "2655:   bash\n"));
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("no pmap rows"));
}

}  // namespace
}  // namespace pageblame::regions

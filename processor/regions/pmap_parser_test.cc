#include "processor/regions/pmap_parser.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
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


std::string Testdata(const std::string& name) {
  return absl::StrCat(PAGEBLAME_SOURCE_DIR, "/processor/regions/testdata/", name);
}

RegionTable ParseFile(const std::string& name) {
  absl::StatusOr<RegionTable> t = RegionTableReader::DetectAndParse(Testdata(name));
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) std::abort();
  return *std::move(t);
}

// rss-sample.truth: "touched START END PAGES", "reserved START END".
struct Truth {
  uint64_t touched_start = 0, touched_end = 0, touched_pages = 0, reserved_start = 0;
};

Truth ReadTruth() {
  std::ifstream in(Testdata("rss-sample.truth"));
  Truth t;
  std::string word;
  in >> word >> std::hex >> t.touched_start >> t.touched_end >> std::dec >> t.touched_pages;
  EXPECT_EQ(word, "touched");
  in >> word >> std::hex >> t.reserved_start;
  EXPECT_EQ(word, "reserved");
  return t;
}

// The row at `start` (rows are handed out by value: a copy).
std::optional<Region> Find(const RegionTable& t, uint64_t start) {
  for (const Region& r : t.regions)
    if (r.start == start) return r;
  return std::nullopt;
}

TEST(PmapParserTest, RssFromTheHeadersColumn) {
  absl::StatusOr<RegionTable> t =
      RegionTableReader::ParseString(absl::StrCat(kXXHeader, kXXRows), "p.txt");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->has_rss);
  EXPECT_EQ(t->rss_note, "");
  ASSERT_EQ(t->regions.size(), 3u);
  EXPECT_EQ(t->regions[0].rss, 188u * 1024);
  EXPECT_EQ(t->regions[1].rss, 0u);  // known: nothing resident, not unknown
  EXPECT_EQ(t->regions[2].rss, 8u * 1024);

  // -x's RSS column.
  t = RegionTableReader::ParseString(
      "Address           Kbytes     RSS   Dirty Mode  Mapping\n"
      "000055d7d2a69000     188     120       0 r---- bash\n",
      "p.txt");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->has_rss);
  EXPECT_EQ(t->regions[0].rss, 120u * 1024);

  // A header without Rss: unknown, and said why.
  t = RegionTableReader::ParseString(
      "Address Perm Offset Device Inode Size Mapping\n"
      "55d7d2a69000 r--p 00000000 fe:00 247101 188 bash\n",
      "p.txt");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE(t->has_rss);
  EXPECT_FALSE(t->regions[0].rss.has_value());
  EXPECT_THAT(t->rss_note, HasSubstr("no Rss column"));
}

// A real pmap -XX of testdata/rss-sample.c (make-rss-samples.sh), stopped
// while pmap and smaps were read: its 64-page mapping with every 4th page
// written has 16 pages resident, the PROT_NONE reservation none, and the
// rows add up to the Rss total pmap printed under its footer.
TEST(PmapParserTest, RealPmapXXRss) {
  const Truth truth = ReadTruth();
  RegionTable t = ParseFile("rss-sample.pmap-XX");
  ASSERT_TRUE(t.has_rss);
  std::optional<Region> touched = Find(t, truth.touched_start);
  ASSERT_TRUE(touched.has_value());
  EXPECT_EQ(touched->end, truth.touched_end);
  EXPECT_EQ(touched->rss, truth.touched_pages * kPageSize);
  std::optional<Region> reserved = Find(t, truth.reserved_start);
  ASSERT_TRUE(reserved.has_value());
  EXPECT_EQ(reserved->protect, "---p");
  EXPECT_EQ(reserved->rss, 0u);

  // pmap's own total: the Rss field of the line under the footer (fields
  // from Size on, so Rss is at its header index minus 5).
  std::ifstream in(Testdata("rss-sample.pmap-XX"));
  std::string line, header, totals;
  bool footer = false;
  while (std::getline(in, line)) {
    if (absl::StrContains(line, " Address ")) header = line;
    if (footer && totals.empty()) totals = line;
    footer |= absl::StrContains(line, "====");
  }
  std::vector<std::string> h = absl::StrSplit(header, ' ', absl::SkipEmpty());
  std::vector<std::string> sum = absl::StrSplit(totals, ' ', absl::SkipEmpty());
  size_t rss_column = std::find(h.begin(), h.end(), "Rss") - h.begin();
  ASSERT_LT(rss_column - 5, sum.size());
  uint64_t rss = 0;
  for (const Region& r : t.regions) rss += *r.rss;
  EXPECT_EQ(rss, std::stoull(sum[rss_column - 5]) * 1024);
}

// Without its header (-q) the -XX layout is recognized and gives the same
// rss, row by row; -X without its header cannot be told apart from other
// field lists: rss unknown, with the reason.
TEST(PmapParserTest, HeaderlessRealSamples) {
  RegionTable with = ParseFile("rss-sample.pmap-XX");
  RegionTable without = ParseFile("rss-sample.pmap-XX-q");
  ASSERT_TRUE(without.has_rss) << without.rss_note;
  ASSERT_EQ(with.regions.size(), without.regions.size());
  for (size_t i = 0; i < with.regions.size(); ++i) {
    EXPECT_EQ(with.regions[i].start, without.regions[i].start);
    EXPECT_EQ(with.regions[i].rss, without.regions[i].rss) << i;
  }
  RegionTable x = ParseFile("rss-sample.pmap-X-q");
  EXPECT_FALSE(x.has_rss);
  EXPECT_EQ(x.regions.size(), with.regions.size());
  for (const Region& r : x.regions) EXPECT_FALSE(r.rss.has_value());
  EXPECT_THAT(x.rss_note, HasSubstr("line 2 has no VmFlags"));
}

// The peer sample (-XX -q of a .NET 7 process, a kernel without KSM):
// recognized too. Checked independently with awk: field 9 sums to 158468
// KiB over the 4150 rows, never above field 6 (Size), and equals fields
// 11-14 or 12-15 on every row; [heap] (line 6) 1920 KiB, [stack] 40 KiB.
TEST(PmapParserTest, PeerSampleHeaderlessRss) {
  RegionTable t = ParseFile("pmap-XX.output");
  ASSERT_TRUE(t.has_rss) << t.rss_note;
  uint64_t rss = 0;
  for (const Region& r : t.regions) rss += r.rss.value();
  EXPECT_EQ(rss, uint64_t{158468} * 1024);
  EXPECT_EQ(t.regions[6 - 2].rss, 1920u * 1024);
  EXPECT_EQ(t.regions[4149 - 2].rss, 40u * 1024);
}

TEST(PmapParserTest, HeaderlessRssOnlyWhenCertain) {
  // Rows of the peer sample's layout (-XX of a 5.x kernel).
  const std::string row1 =
      "5585e95a2000 r--p 00000000  08:01  915517  48  4  4  48  24  0  48  0  0  0  48  0  0  0  0  0  0  0  0  "
      "0  0  0  rd mr mw me sd dotnet\n";
  const std::string row2 =
      "5585e95ae000 r-xp 0000c000  08:01  915517  88  4  4  80  44  0  72  0  8  0  80  0  0  0  0  0  0  0  0  "
      "0  0  0  rd ex mr mw me sd dotnet\n";
  absl::StatusOr<RegionTable> t = PmapParser::Parse(TextLines("p.txt", row1 + row2));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->has_rss);
  EXPECT_EQ(t->regions[1].rss, 80u * 1024);

  // A kernel before 4.14 put KernelPageSize/MMUPageSize after Swap: Rss
  // (80) follows Size, and the fields after it are no page sizes.
  const std::string old =
      "5585e95ae000 r-xp 0000c000  08:01  915517  88  80  44  72  0  8  0  80  0  0  0  4  4  0  0  0  0  0  0  "
      "0  0  0  rd ex mr mw me sd dotnet\n";
  t = PmapParser::Parse(TextLines("p.txt", row1 + old));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE(t->has_rss);
  for (const Region& r : t->regions) EXPECT_FALSE(r.rss.has_value());
  EXPECT_THAT(t->rss_note, HasSubstr("line 2 has no KernelPageSize and MMUPageSize after Size"));

  // Page sizes in place, but no Rss the kernel's four parts add up to.
  std::string off = row2;
  off.replace(off.find("  80  44"), 8, "  84  44");
  t = PmapParser::Parse(TextLines("p.txt", row1 + off));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE(t->has_rss);
  EXPECT_THAT(t->rss_note, HasSubstr("line 2 has no Rss equal to Shared_Clean"));

  // Recognized, but Rss above Size: an error, as with a header.
  std::string big = row2;
  big.replace(big.find("  88  4"), 7, "  76  4");
  t = PmapParser::Parse(TextLines("p.txt", row1 + big));
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()),
              StartsWith("p.txt:2: Rss 80 KiB is more than the row's Size 76 KiB"));
}

// Issue 44: a header whose names are not the rows' columns must not shift
// the values read by name. The -XX header above with two names taken out,
// one repeated, one added: each is an error naming the line, never Rss
// read from another column.
TEST(PmapParserTest, HeaderThatDoesNotMatchTheRowsIsAnError) {
  auto parse = [](const std::string& header) {
    return PmapParser::Parse(TextLines("p.txt", absl::StrCat(header, kXXRows)));
  };
  auto replace = [](std::string s, const std::string& from, const std::string& to) {
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  // Two names missing: the rows have two more numbers than it names.
  absl::StatusOr<RegionTable> t = parse(replace(kXXHeader, " KernelPageSize MMUPageSize", ""));
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), StartsWith("p.txt:3: expected 'Address Perm"));
  EXPECT_THAT(std::string(t.status().message()),
              HasSubstr("one more number, '0', than the header on line 2 names 26 columns before "
                        "VmFlags: a column missing from the header?"));
  // A name twice: which one a value belongs to is a guess.
  t = parse(replace(kXXHeader, " Pss ", " Rss "));
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()),
              StartsWith("p.txt:2: pmap header names 'Rss' twice (columns 9 and 10)"));
  t = parse(replace(kXXHeader, " Pss ", " RSS "));  // one role, two spellings
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()),
              StartsWith("p.txt:2: pmap header has two Rss/RSS columns ('Rss', column 9, and 'RSS', "
                         "column 10)"));
  // A name too many: the row runs out of numbers where the header still
  // names one, and VmFlags come where the number should be.
  t = parse(replace(kXXHeader, " Size ", " Size Extra "));
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()),
              HasSubstr("(bad THPeligible 'rd': the header on line 2 names 29 columns before VmFlags)"));
  // Names swapped keep the count and the forms, but Rss is no longer the
  // sum of the kernel's four parts.
  t = parse(replace(kXXHeader, "  Rss Pss ", "  Pss Rss "));
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()),
              StartsWith("p.txt:3: Rss 37 KiB is not Shared_Clean + Shared_Dirty + Private_Clean + "
                         "Private_Dirty = 188 KiB, as the kernel counts it: the header on line 2 "
                         "does not match the rows"));
  // The header as pmap printed it still parses.
  ASSERT_TRUE(parse(kXXHeader).ok());
}

// Without VmFlags (-X) a number after the named columns is the mapping's
// name only where pmap prints Mapping: under the header's "Mapping".
TEST(PmapParserTest, NumericMappingOnlyUnderTheMappingHeader) {
  const std::string prefix = "55d7d2a69000 r--p 00000000 fe:00 247101 188 188 ";
  const std::string names = "Address Perm Offset Device Inode Size Rss ";
  // pmap's layout: Mapping's name starts where the header's "Mapping" does.
  const std::string header = std::string(prefix.size() - names.size(), ' ') + names + "Mapping\n";
  absl::StatusOr<RegionTable> t = PmapParser::Parse(TextLines("p.txt", header + prefix + "42\n"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->regions[0].usage, "42");
  EXPECT_EQ(t->regions[0].rss, 188u * 1024);
  // Anywhere else it is a column the header does not name.
  t = PmapParser::Parse(TextLines("p.txt", header + prefix + " 42\n"));
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()),
              HasSubstr("(one more number, '42', than the header on line 1 names 7 columns before "
                        "Mapping: a column missing from the header?)"));
}

TEST(PmapParserTest, BadRss) {
  const char* header = "Address Perm Offset Device Inode Size Rss Mapping\n";
  struct Case {
    const char* row;
    const char* message;
  } cases[] = {
      {"55d7d2a69000 r--p 00000000 fe:00 247101 188 1x8 bash\n", "p.txt:2: expected 'Address Perm "
                                                                 "Offset Device Inode Size Rss "
                                                                 "Mapping' (bad Rss '1x8')"},
      {"55d7d2a69000 r--p 00000000 fe:00 247101 188 - bash\n", "(bad Rss '-')"},
      {"55d7d2a69000 r--p 00000000 fe:00 247101 188 192 bash\n",
       "p.txt:2: Rss 192 KiB is more than the row's Size 188 KiB"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<RegionTable> t = PmapParser::Parse(TextLines("p.txt", absl::StrCat(header, c.row)));
    ASSERT_FALSE(t.ok()) << c.row;
    EXPECT_THAT(std::string(t.status().message()), HasSubstr(c.message)) << c.row;
  }
}

}  // namespace
}  // namespace pageblame::regions

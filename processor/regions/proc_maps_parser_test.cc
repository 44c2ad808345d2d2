#include "processor/regions/proc_maps_parser.h"

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/regions/region_table_reader.h"

namespace pageblame::regions {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(ProcMapsParserTest, Maps) {
  absl::StatusOr<RegionTable> t = RegionTableReader::ParseString(
      "55d7d2a69000-55d7d2a98000 r--p 00000000 fe:00 247101                     /usr/bin/bash\n"
      "55d7d3e4e000-55d7d3fcf000 rw-p 00000000 00:00 0                          [heap]\n"
      "7f3bad120000-7f3bad420000 rw-s 00000000 00:01 1033                       /memfd:x (deleted)\n"
      "7f3bad420000-7f3bad421000 ---p 00000000 00:00 0 \n",
      "maps");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->format, "maps");
  ASSERT_EQ(t->regions.size(), 4u);
  EXPECT_EQ(t->regions[0].start, 0x55d7d2a69000u);
  EXPECT_EQ(t->regions[0].end, 0x55d7d2a98000u);
  EXPECT_EQ(t->regions[0].protect, "r--p");
  EXPECT_EQ(t->regions[0].usage, "/usr/bin/bash");
  EXPECT_EQ(t->regions[1].usage, "[heap]");
  EXPECT_EQ(t->regions[2].usage, "/memfd:x (deleted)");
  EXPECT_EQ(t->regions[3].usage, "");
  EXPECT_EQ(t->regions[3].line, 4);
}

TEST(ProcMapsParserTest, SmapsChecksSize) {
  const char* head =
      "55d7d2a69000-55d7d2a98000 r--p 00000000 fe:00 247101                     /usr/bin/bash\n";
  absl::StatusOr<RegionTable> t = ProcMapsParser::Parse(TextLines(
      "smaps", absl::StrCat(head, "Size:                188 kB\nRss:  188 kB\nVmFlags: rd mr mw me\n")));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->format, "smaps");
  EXPECT_EQ(t->regions.size(), 1u);
  EXPECT_EQ(t->skipped, 0);

  t = ProcMapsParser::Parse(TextLines("smaps", absl::StrCat(head, "Size:  192 kB\n")));
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), StartsWith("smaps:2: Size: 192 kB does not match"));
}

// The real thing: this test process's own maps and smaps.
TEST(ProcMapsParserTest, OwnProcFiles) {
  for (const char* file : {"/proc/self/maps", "/proc/self/smaps"}) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    int lines = 0;
    for (char c : text.str()) lines += c == '\n';
    absl::StatusOr<RegionTable> t = RegionTableReader::ParseString(text.str(), file);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->skipped, 0) << file;
    if (std::string(file) == "/proc/self/maps") {
      EXPECT_EQ(t->format, "maps");
      EXPECT_EQ(static_cast<int>(t->regions.size()), lines);
    } else {
      EXPECT_EQ(t->format, "smaps");
    }
    bool stack = false;
    for (const Region& r : t->regions) stack |= r.usage == "[stack]";
    EXPECT_TRUE(stack) << file;
  }
}

TEST(ProcMapsParserTest, MalformedLines) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"55d7d2a69000-55d7d2a98000 r--p 00000000 fe:00\n",
       "m:1: expected 'START-END PERMS OFFSET MAJ:MIN INODE [PATH]'"},
      {"55d7d2a69000-55d7d2a9z000 r--p 00000000 fe:00 1 /x\n", "m:1: expected 'START-END"},
      {"55d7d2a98000-55d7d2a69000 r--p 00000000 fe:00 1 /x\n", "m:1: END 0x55d7d2a69000 is not above"},
      // Not whole pages: sub-page pieces in a page diff.
      {"55d7d2a69000-55d7d2a69003 r--p 00000000 fe:00 1 /x\n",
       "m:1: 0x55d7d2a69000-0x55d7d2a69003 is not page-aligned"},
      {"55d7d2a69800-55d7d2a6a000 r--p 00000000 fe:00 1 /x\n", "m:1: 0x55d7d2a69800-"},
      {"Size: 4 kB\n", "m:1: expected 'Size: N kB' right after a mapping line"},
      {"hello\n", "m: no maps lines found"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<RegionTable> t = ProcMapsParser::Parse(TextLines("m", c.text));
    ASSERT_FALSE(t.ok()) << c.text;
    EXPECT_THAT(std::string(t.status().message()), HasSubstr(c.message)) << c.text;
  }
}


std::string Testdata(const std::string& name) {
  return absl::StrCat(PAGEBLAME_SOURCE_DIR, "/processor/regions/testdata/", name);
}

// rss-sample.smaps and rss-sample.pmap-XX were read from one stopped
// process (testdata/make-rss-samples.sh): the same rows with the same Rss,
// and the touched mapping has the pages the program wrote.
TEST(ProcMapsParserTest, RealSmapsRss) {
  absl::StatusOr<RegionTable> smaps = RegionTableReader::DetectAndParse(Testdata("rss-sample.smaps"));
  ASSERT_TRUE(smaps.ok()) << smaps.status();
  EXPECT_EQ(smaps->format, "smaps");
  EXPECT_TRUE(smaps->has_rss);
  absl::StatusOr<RegionTable> pmap = RegionTableReader::DetectAndParse(Testdata("rss-sample.pmap-XX"));
  ASSERT_TRUE(pmap.ok()) << pmap.status();
  ASSERT_EQ(smaps->regions.size(), pmap->regions.size());
  for (size_t i = 0; i < smaps->regions.size(); ++i) {
    EXPECT_EQ(smaps->regions[i].start, pmap->regions[i].start);
    EXPECT_EQ(smaps->regions[i].end, pmap->regions[i].end);
    ASSERT_TRUE(smaps->regions[i].rss.has_value());
    EXPECT_EQ(smaps->regions[i].rss, pmap->regions[i].rss) << i;
  }
  std::ifstream truth(Testdata("rss-sample.truth"));
  std::string word;
  uint64_t start = 0, end = 0, pages = 0;
  truth >> word >> std::hex >> start >> end >> std::dec >> pages;
  bool found = false;
  for (const Region& r : smaps->regions) {
    if (r.start != start) continue;
    found = true;
    EXPECT_EQ(r.end, end);
    EXPECT_EQ(r.rss, pages * kPageSize);
  }
  EXPECT_TRUE(found);
}

TEST(ProcMapsParserTest, SmapsRssChecks) {
  const std::string a = "7f0000000000-7f0000004000 rw-p 00000000 00:00 0\nSize: 16 kB\n";
  const std::string b = "7f0000010000-7f0000011000 rw-p 00000000 00:00 0\nSize: 4 kB\n";
  // Without any Rss: line: unknown, not 0.
  absl::StatusOr<RegionTable> t = ProcMapsParser::Parse(TextLines("s", a + b));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE(t->has_rss);
  EXPECT_FALSE(t->regions[0].rss.has_value());
  EXPECT_THAT(t->rss_note, HasSubstr("no Rss: lines"));
  // A maps file: unknown, nothing to say.
  t = ProcMapsParser::Parse(TextLines("m", "7f0000000000-7f0000004000 rw-p 00000000 00:00 0\n"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE(t->has_rss);
  EXPECT_EQ(t->rss_note, "");

  t = ProcMapsParser::Parse(TextLines("s", a + "Rss: 8 kB\n" + b + "Rss:  0 kB\n"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->has_rss);
  EXPECT_EQ(t->regions[0].rss, 8192u);
  EXPECT_EQ(t->regions[1].rss, 0u);

  struct Case {
    std::string text;
    const char* message;
  } cases[] = {
      {a + "Rss: 20 kB\n", "s:3: Rss: 20 kB is more than the mapping 0x7f0000000000-0x7f0000004000 above (16 kB)"},
      {a + "Rss: 4 kB\nRss: 4 kB\n", "s:4: a second Rss: line in the entry of line 1"},
      {a + "Rss: x kB\n", "s:3: expected 'Rss: N kB' in the entry of a mapping line, got 'Rss: x kB'"},
      {a + "Rss: 4\n", "s:3: expected 'Rss: N kB'"},
      {"Rss: 4 kB\n" + a, "s:1: expected 'Rss: N kB' in the entry of a mapping line"},
      {a + "Rss: 4 kB\n" + b, "s:4: this smaps entry has no Rss: line (other entries have one)"},
  };
  for (const Case& c : cases) {
    t = ProcMapsParser::Parse(TextLines("s", c.text));
    ASSERT_FALSE(t.ok()) << c.text;
    EXPECT_THAT(std::string(t.status().message()), HasSubstr(c.message)) << c.text;
  }
}

}  // namespace
}  // namespace pageblame::regions

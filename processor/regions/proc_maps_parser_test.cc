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

}  // namespace
}  // namespace pageblame::regions

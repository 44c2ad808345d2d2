#include "processor/symbols/perf_map.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/symbols/test_util.h"

namespace pageblame::symbols {
namespace {

std::string NameAt(const PerfMap& map, uint64_t addr) {
  const PerfMap::Entry* e = map.Find(addr);
  return e ? e->name : "<none>";
}

TEST(PerfMapTest, ParsesTheFormatsJitsWrite) {
  PerfMap map = PerfMap::Parse(
      // node --perf-basic-prof: bare hex, names with spaces and punctuation
      "3ef414c0 398 RegExp:[{(]\n"
      "3ef41880 2c LazyCompile:~foo /app/index.js:12:3\n"
      // perf-map-agent / .NET: 0x prefixes, CRLF
      "0x7f0000001000 0x100 Ljava/lang/String;::hashCode\r\n"
      "\n"
      "7F0000002000 10 [stub<1>]  \n");
  EXPECT_EQ(map.size(), 4u);
  EXPECT_EQ(map.bad_lines(), 0u);
  EXPECT_EQ(NameAt(map, 0x3ef414c0), "RegExp:[{(]");
  EXPECT_EQ(NameAt(map, 0x3ef414c0 + 0x397), "RegExp:[{(]");
  EXPECT_EQ(NameAt(map, 0x3ef414c0 + 0x398), "<none>");  // end is exclusive
  EXPECT_EQ(NameAt(map, 0x3ef418ab), "LazyCompile:~foo /app/index.js:12:3");
  EXPECT_EQ(NameAt(map, 0x3ef418ac), "<none>");
  EXPECT_EQ(NameAt(map, 0x7f00000010ff), "Ljava/lang/String;::hashCode");
  EXPECT_EQ(NameAt(map, 0x7f000000200f), "[stub<1>]");
  EXPECT_EQ(NameAt(map, 0x3ef414bf), "<none>");
  const PerfMap::Entry* e = map.Find(0x7f0000001010);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->start, 0x7f0000001000u);
  EXPECT_EQ(e->end, 0x7f0000001100u);
}

TEST(PerfMapTest, BadLinesAreSkippedAndCounted) {
  PerfMap map = PerfMap::Parse(
      "zzzz 10 bad_start\n"
      "1000 qq bad_size\n"
      "2000 10\n"  // no name
      "ffffffffffffff00 1000 wraps\n"
      "3000 10 good\n");
  EXPECT_EQ(map.size(), 1u);
  EXPECT_EQ(map.bad_lines(), 4u);
  EXPECT_EQ(NameAt(map, 0x3008), "good");
}

TEST(PerfMapTest, LaterLinesWinWhereTheyOverlap) {
  PerfMap map = PerfMap::Parse(
      "1000 1000 old_big\n"   // [0x1000, 0x2000)
      "1400 100 new_mid\n"    // splits old_big
      "1f00 200 new_tail\n"   // overlaps old_big's end
      "0800 900 new_head\n"   // [0x800, 0x1100) overlaps old_big's start
      "5000 0 zero_size\n");  // names one byte
  EXPECT_EQ(NameAt(map, 0x0800), "new_head");
  EXPECT_EQ(NameAt(map, 0x10ff), "new_head");
  EXPECT_EQ(NameAt(map, 0x1100), "old_big");
  EXPECT_EQ(NameAt(map, 0x13ff), "old_big");
  EXPECT_EQ(NameAt(map, 0x1400), "new_mid");
  EXPECT_EQ(NameAt(map, 0x14ff), "new_mid");
  EXPECT_EQ(NameAt(map, 0x1500), "old_big");
  EXPECT_EQ(NameAt(map, 0x1eff), "old_big");
  EXPECT_EQ(NameAt(map, 0x1f00), "new_tail");
  EXPECT_EQ(NameAt(map, 0x20ff), "new_tail");
  EXPECT_EQ(NameAt(map, 0x2100), "<none>");
  EXPECT_EQ(NameAt(map, 0x5000), "zero_size");
  EXPECT_EQ(NameAt(map, 0x5001), "<none>");
  // The entry keeps its own start, so offsets are from the blob start.
  EXPECT_EQ(map.Find(0x1500)->start, 0x1000u);
}

TEST(PerfMapTest, RepeatedIdenticalLinesAndFullReplacement) {
  PerfMap map = PerfMap::Parse(
      "1000 100 a\n"
      "1000 100 b\n"
      "0f00 300 c\n");  // covers everything before
  EXPECT_EQ(NameAt(map, 0x1000), "c");
  EXPECT_EQ(NameAt(map, 0x0f00), "c");
  EXPECT_EQ(NameAt(map, 0x11ff), "c");
}

TEST(PerfMapTest, LoadReadsAFileAndReportsAMissingOne) {
  testing::TempDir dir;
  testing::WriteFile(dir.path() + "/perf-7.map", "1000 10 jitted\n");
  absl::StatusOr<PerfMap> map = PerfMap::Load(dir.path() + "/perf-7.map", /*force=*/false);
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_EQ(NameAt(*map, 0x1004), "jitted");
  EXPECT_EQ(PerfMap::Load(dir.path() + "/perf-8.map", /*force=*/false).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(PerfMapTest, CandidatePathsInOrder) {
  EXPECT_THAT(PerfMap::CandidatePaths(1234, "/data/run1/perf.data", "/tmp", "/maps/"),
              ::testing::ElementsAre("/data/run1/perf.data.runtime/perf-1234.map", "/data/run1/perf-1234.map",
                                     "/tmp/perf-1234.map", "/maps/perf-1234.map"));
  EXPECT_THAT(PerfMap::CandidatePaths(5, "perf.data", "/tmp", ""),
              ::testing::ElementsAre("perf.data.runtime/perf-5.map", "./perf-5.map", "/tmp/perf-5.map"));
  EXPECT_THAT(PerfMap::CandidatePaths(5, "-", "/tmp", ""), ::testing::ElementsAre("./perf-5.map", "/tmp/perf-5.map"));
  EXPECT_THAT(PerfMap::CandidatePaths(5, "", "/tmp", ""), ::testing::ElementsAre("/tmp/perf-5.map"));
  EXPECT_THAT(PerfMap::CandidatePaths(5, "", "/run/shared", ""),
              ::testing::ElementsAre("/run/shared/perf-5.map"));
}

TEST(PerfMapTest, ADirectoryNamedTwiceIsLookedInOnce) {
  // A trace kept in /tmp: beside it is /tmp (one look, one warning if refused).
  EXPECT_THAT(PerfMap::CandidatePaths(5, "/tmp/perf.data", "/tmp", "/tmp/"),
              ::testing::ElementsAre("/tmp/perf.data.runtime/perf-5.map", "/tmp/perf-5.map"));
  EXPECT_THAT(PerfMap::CandidatePaths(5, "/perf.data", "/tmp", ""),
              ::testing::ElementsAre("/perf.data.runtime/perf-5.map", "/perf-5.map", "/tmp/perf-5.map"));
  EXPECT_EQ(PerfMap::DsoName(1234), "/tmp/perf-1234.map");
}

}  // namespace
}  // namespace pageblame::symbols

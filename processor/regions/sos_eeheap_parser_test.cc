#include "processor/regions/sos_eeheap_parser.h"

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/regions/region_table_reader.h"

namespace pageblame::regions {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Real output of `dotnet-dump analyze app.core -c eeheap -c exit`
// (dotnet-dump 10.0.750501, .NET 10.0.12) on traces/src/dotnet-leak at READY:
// -regions: workstation GC (regions); -server: DOTNET_gcServer=1 (2 heaps);
// -segments: DOTNET_GCName=libclrgc.so (the segments GC).
std::string TestData(const std::string& name) {
  return absl::StrCat(PAGEBLAME_SOURCE_DIR, "/processor/regions/testdata/", name);
}

std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

RegionTable ParseOrDie(const std::string& name) {
  absl::StatusOr<RegionTable> t = RegionTableReader::DetectAndParse(TestData(name));
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : RegionTable();
}

uint64_t Bytes(const RegionTable& t, absl::string_view usage_prefix, absl::string_view state) {
  uint64_t sum = 0;
  for (const Region& r : t.regions)
    if (absl::StartsWith(r.usage, usage_prefix) && r.state == state) sum += r.size();
  return sum;
}

int Count(const RegionTable& t, absl::string_view usage_prefix) {
  int n = 0;
  for (const Region& r : t.regions) n += absl::StartsWith(r.usage, usage_prefix);
  return n;
}

// Totals counted with a script on the files (segment rows and their
// committed sizes; ADDR(RESERVED:COMMITTED) blocks).
TEST(SosEeheapParserTest, WorkstationRegions) {
  RegionTable t = ParseOrDie("sos-eeheap-regions.output");
  EXPECT_EQ(t.format, "sos-eeheap");
  EXPECT_TRUE(t.has_state);
  EXPECT_EQ(t.skipped, 1);  // "Loading core dump: app.core ..."
  EXPECT_EQ(Count(t, "GCHeap"), 21);
  EXPECT_EQ(Bytes(t, "GCHeap", "MEM_COMMIT"), 0x5189000u);
  EXPECT_EQ(Count(t, "GCHeap gen0"), 1);
  EXPECT_EQ(Count(t, "GCHeap gen1"), 5);
  EXPECT_EQ(Count(t, "GCHeap gen2"), 11);
  EXPECT_EQ(Count(t, "GCHeap LOH"), 2);
  // The region's committed part starts at the region, before its first
  // object (begin 7fdbab000028).
  bool found = false;
  for (const Region& r : t.regions) {
    if (r.usage == "GCHeap gen0") {
      EXPECT_EQ(r.start, 0x7fdbab000000u);
      EXPECT_EQ(r.end, 0x7fdbab0d1000u);
      found = true;
    }
  }
  EXPECT_TRUE(found);
  // Loader and code heaps: committed and reserved bytes of every block.
  uint64_t committed = 0, reserved = 0;
  for (const Region& r : t.regions) {
    if (absl::StartsWith(r.usage, "GCHeap")) continue;
    (r.state == "MEM_COMMIT" ? committed : reserved) += r.size();
  }
  EXPECT_EQ(committed, 0x292000u);
  EXPECT_EQ(committed + reserved, 0x325000u);
  EXPECT_EQ(Bytes(t, "LoaderCodeHeap", "MEM_COMMIT"), 0xd000u);
  EXPECT_EQ(Bytes(t, "LoaderCodeHeap", "MEM_RESERVE"), 0x80000u - 0xd000u);
}

TEST(SosEeheapParserTest, ServerGcNamesTheHeap) {
  RegionTable t = ParseOrDie("sos-eeheap-server.output");
  EXPECT_EQ(Count(t, "GCHeap"), 21);
  EXPECT_EQ(Bytes(t, "GCHeap", "MEM_COMMIT"), 0x51b7000u);
  int heap0 = 0, heap1 = 0;
  for (const Region& r : t.regions) {
    heap0 += absl::EndsWith(r.usage, " heap 0");
    heap1 += absl::EndsWith(r.usage, " heap 1");
  }
  EXPECT_GT(heap0, 0);
  EXPECT_GT(heap1, 0);
  EXPECT_EQ(heap0 + heap1, 21);
}

// Segments: the committed part of a segment starts at the segment itself
// (the SEGMENT column), a page before BEGIN.
TEST(SosEeheapParserTest, SegmentsGc) {
  RegionTable t = ParseOrDie("sos-eeheap-segments.output");
  EXPECT_EQ(Count(t, "GCHeap"), 4);
  EXPECT_EQ(Bytes(t, "GCHeap", "MEM_COMMIT"), 0x5116000u);
  std::set<uint64_t> starts;
  for (const Region& r : t.regions) starts.insert(r.start);
  for (uint64_t segment : {0x7fda54000000u, 0x7fda64000000u, 0x7fda6c000000u})
    EXPECT_TRUE(starts.count(segment)) << std::hex << segment;
}

// ClrMD (tools/dotnet-regions, the helper's output on the same dump)
// and SOS agree: every GC region's committed part, every loader block.
TEST(SosEeheapParserTest, AgreesWithClrMdOnTheSameDump) {
  RegionTable t = ParseOrDie("sos-eeheap-regions.output");
  std::map<std::pair<uint64_t, uint64_t>, std::string> sos;  // block (committed + reserved) -> kind
  std::set<std::pair<uint64_t, uint64_t>> sos_gc;
  for (size_t i = 0; i < t.regions.size(); ++i) {
    const Region& r = t.regions[i];
    if (absl::StartsWith(r.usage, "GCHeap")) {
      sos_gc.insert({r.start, r.end});
      continue;
    }
    // A block gives its committed part, then its reserved tail.
    uint64_t end = r.end;
    if (i + 1 < t.regions.size() && t.regions[i + 1].line == r.line && t.regions[i + 1].start == r.end &&
        t.regions[i + 1].state == "MEM_RESERVE" && r.state == "MEM_COMMIT") {
      end = t.regions[++i].end;
    }
    sos[{r.start, end}] = r.usage;
  }
  int gc = 0, blocks = 0;
  const std::string helper = Slurp(TestData("dotnet-regions-core.helper"));
  for (absl::string_view line : absl::StrSplit(helper, '\n')) {
    std::vector<std::string> f = absl::StrSplit(line, '\t');
    if (f.size() < 5 || f[0] != "range") continue;
    uint64_t start = 0, end = 0;
    ASSERT_TRUE(absl::SimpleHexAtoi(f[1], &start) && absl::SimpleHexAtoi(f[2], &end)) << line;
    if (f[3] == "GCHeap") {
      EXPECT_TRUE(sos_gc.count({start, end})) << line;
      ++gc;
    } else if (sos.count({start, end})) {
      EXPECT_EQ(sos[std::make_pair(start, end)], f[3]) << line;
      ++blocks;
    } else {
      // Only what eeheap does not print: the reserved rest of GC regions,
      // the handle table, the GC's bookkeeping.
      EXPECT_THAT(f[3], testing::AnyOf("GCHeapReserve", "HandleTable", "GCBookkeeping")) << line;
    }
  }
  EXPECT_EQ(gc, 21);
  EXPECT_EQ(blocks, 39);
}

TEST(SosEeheapParserTest, DetectedBeforeOtherFormats) {
  EXPECT_TRUE(SosEeheapParser::IsSignature("Loader Heap:"));
  EXPECT_TRUE(SosEeheapParser::IsSignature("Number of GC Heaps: 2"));
  EXPECT_TRUE(SosEeheapParser::IsSignature(
      "LoaderCodeHeap:       7fe77f0a0000(80000:d000) Size: 0xd000 (53248) bytes total."));
  EXPECT_FALSE(SosEeheapParser::IsSignature("System Domain:        7fe7fd6cce00"));
  // `eeheap -gc` alone.
  absl::StatusOr<RegionTable> t = RegionTableReader::ParseString(
      "Number of GC Heaps: 1\n"
      "Large object heap\n"
      "         segment            begin        allocated        committed allocated size       committed size\n"
      "    7fdb8b2534b8     7fdba5c00028     7fdba7b20728     7fdba7b21000 0x1f20700 (32638720) 0x1f21000 (32641024)\n"
      "    7fdb8b254328     7fdbab400028     7fdbab400028     7fdbab401000 0x1000 (4096)\n"
      "GC Committed Heap Size:    Size: 0x1f22000 (32645120) bytes.\n",
      "gc.txt");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->regions.size(), 2u);
  EXPECT_EQ(t->regions[0].usage, "GCHeap LOH");
  EXPECT_EQ(t->regions[0].start, 0x7fdba5c00000u);
  // An empty region: no allocated size printed, the one size is committed.
  EXPECT_EQ(t->regions[1].start, 0x7fdbab400000u);
  EXPECT_EQ(t->regions[1].size(), 0x1000u);
}

// Damaged copies of the real output: a wrong number is an error naming its
// line, never a silently different table.
TEST(SosEeheapParserTest, InconsistentNumbersAreErrors) {
  const std::string real = Slurp(TestData("sos-eeheap-regions.output"));
  struct Case {
    std::string from, to, message;
  } cases[] = {
      {"StubHeap:             7fe77e06d000(3000:1000)", "StubHeap:             7fe77e06d000(3000:2000)",
       "StubHeap: Size 0x1000 is not the sum of the blocks' committed sizes (0x2000)"},
      {"7fe77e070000(6000:1000)", "7fe77e070000(1000:6000)", "COMMITTED <= RESERVED"},
      {"Total size:           Size: 0x285000 (2641920)", "Total size:           Size: 0x286000 (2646016)",
       "total 0x286000 is not the sum of the heaps above it (0x285000)"},
      {"0xd1000 (856064)", "0xd2000 (856064)", "is not its decimal"},
      {"GC Committed Heap Size:    Size: 0x5189000 (85495808)", "GC Committed Heap Size:    Size: 0x5188000 (85491712)",
       "is not the sum of the segments' (0x5189000)"},
      {"7fdba3000028     7fdba3002020", "7fdba3002028     7fdba3002020", "BEGIN <= ALLOCATED <= COMMITTED"},
  };
  for (const Case& c : cases) {
    ASSERT_TRUE(absl::StrContains(real, c.from)) << c.from;
    absl::StatusOr<RegionTable> t =
        RegionTableReader::ParseString(absl::StrReplaceAll(real, {{c.from, c.to}}), "eeheap.txt");
    ASSERT_FALSE(t.ok()) << c.to;
    EXPECT_THAT(std::string(t.status().message()), StartsWith("eeheap.txt:")) << c.to;
    EXPECT_THAT(std::string(t.status().message()), HasSubstr(c.message)) << c.to;
  }
}

}  // namespace
}  // namespace pageblame::regions

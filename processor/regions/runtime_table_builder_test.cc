#include "processor/regions/runtime_table_builder.h"

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/regions/maddress_table_writer.h"
#include "processor/regions/page_diff.h"
#include "processor/regions/proc_maps_parser.h"
#include "processor/regions/region_table_reader.h"

namespace pageblame::regions {
namespace {

// The helper's real output on traces/src/dotnet-leak (clr_helper_output_test.cc)
// with the process's own table: the maps read while it was stopped, or the
// createdump core (trimmed to headers and notes by traces/trim-core.py).
std::string TestData(const std::string& name) {
  return absl::StrCat(PAGEBLAME_SOURCE_DIR, "/processor/regions/testdata/", name);
}

ClrHelperOutput Helper(const std::string& name) {
  std::ifstream f(TestData(name));
  std::stringstream ss;
  ss << f.rdbuf();
  absl::StatusOr<ClrHelperOutput> out = ClrHelperOutputParser::Parse(TextLines(name, ss.str()));
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : ClrHelperOutput();
}

struct Built {
  ClrHelperOutput clr;
  RegionTable os;
  RuntimeTable table;
};

Built Live() {
  Built b;
  b.clr = Helper("dotnet-regions-pid.helper");
  absl::StatusOr<RegionTable> os = ProcMapsParser::Parse(TextLines("maps", b.clr.maps));
  EXPECT_TRUE(os.ok()) << os.status();
  b.os = *os;
  b.table = RuntimeTableBuilder::Build(b.clr, b.os);
  return b;
}

Built Core() {
  Built b;
  b.clr = Helper("dotnet-regions-core.helper");
  absl::StatusOr<RegionTable> os = RegionTableReader::DetectAndParse(TestData("dotnet-regions-app.core.trim"));
  EXPECT_TRUE(os.ok()) << os.status();
  b.os = *os;
  b.table = RuntimeTableBuilder::Build(b.clr, b.os);
  return b;
}

// The file an OS region maps, as each table says it.
std::string PathOf(const RegionTable& os, const Region& r) {
  if (os.format == "elf-core") return r.type == "MEM_MAPPED" ? r.usage : "";
  return r.usage;
}

// Every row lies in the OS table's regions (for a core, rows it lists as
// reserved may lie outside: PROT_NONE memory has no segment); rows do not
// overlap; an Image row lies only in its own file's mappings.
void CheckRowsAgainst(const Built& b) {
  uint64_t prev_end = 0;
  for (const RuntimeRow& row : b.table.rows) {
    EXPECT_GE(row.start, prev_end) << std::hex << row.start << " overlaps the row before";
    prev_end = row.end;
    uint64_t covered = 0;
    for (const Region& r : b.os.regions) {
      if (r.end <= row.start || r.start >= row.end) continue;
      covered += std::min(r.end, row.end) - std::max(r.start, row.start);
      if (row.kind == "Image") {
        EXPECT_EQ(PathOf(b.os, r), row.image) << std::hex << row.start;
      }
    }
    if (b.clr.live || row.state == "MEM_COMMIT") {
      EXPECT_EQ(covered, row.end - row.start) << row.kind << " " << std::hex << row.start << "-" << row.end;
    }
  }
}

TEST(RuntimeTableBuilderTest, LiveRowsLieInTheirMappings) {
  Built b = Live();
  ASSERT_FALSE(b.table.rows.empty());
  CheckRowsAgainst(b);
  EXPECT_EQ(b.table.unmapped_bytes, 0u);
}

TEST(RuntimeTableBuilderTest, CoreRowsLieInTheirSegments) {
  Built b = Core();
  ASSERT_FALSE(b.table.rows.empty());
  CheckRowsAgainst(b);
  EXPECT_EQ(b.table.unmapped_bytes, 0u);
}

// ClrMD sizes System.Memory.dll by its PE image: past its flat mapping, into
// System.Collections.dll's (live; in the core ClrMD sizes images otherwise).
// The table keeps each image to its own file's mappings, all of them:
// CoreLib's ReadyToRun code is mapped apart from its flat image.
TEST(RuntimeTableBuilderTest, ImagesAreClippedToTheirOwnMappings) {
  for (const Built& b : {Live(), Core()}) {
    SCOPED_TRACE(b.clr.live ? "live" : "core");
    int overruns = 0;
    for (const ClrImage& image : b.clr.images) {
      for (const Region& r : b.os.regions) {
        const std::string path = PathOf(b.os, r);
        if (r.start < image.end && r.end > image.start && !path.empty() && path != image.path) ++overruns;
      }
    }
    if (b.clr.live) {
      EXPECT_GT(overruns, 0) << "the recording shows no image running into another file";
      EXPECT_GT(b.table.image_bytes_clipped, 0u);
    }
    uint64_t file_bytes = 0;
    const std::string corelib = "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/System.Private.CoreLib.dll";
    for (const Region& r : b.os.regions)
      if (PathOf(b.os, r) == corelib) file_bytes += r.end - r.start;
    std::map<std::string, uint64_t> image_bytes;
    for (const RuntimeRow& row : b.table.rows)
      if (row.kind == "Image") image_bytes[row.image] += row.end - row.start;
    EXPECT_GT(image_bytes["/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/System.Memory.dll"], 0u);
    EXPECT_EQ(image_bytes[corelib], file_bytes);
    EXPECT_GT(file_bytes, 16u << 20);
  }
}

// What ClrMD calls the GC's committed memory is what the kernel made
// accessible (rw), and its reserved rest is PROT_NONE: two sources agree.
TEST(RuntimeTableBuilderTest, GcCommittedPartsAreAccessible) {
  for (const Built& b : {Live(), Core()}) {
    uint64_t committed = 0, reserve = 0;
    for (const RuntimeRow& row : b.table.rows) {
      if (row.kind == "GCHeap") {
        EXPECT_EQ(row.state, "MEM_COMMIT") << std::hex << row.start;
        EXPECT_EQ(row.protect, "PAGE_READWRITE") << std::hex << row.start;
        committed += row.end - row.start;
      } else if (row.kind == "GCHeapReserve") {
        EXPECT_EQ(row.state, "MEM_RESERVE") << std::hex << row.start;
        reserve += row.end - row.start;
      }
    }
    uint64_t clr_committed = 0;
    for (const ClrRange& r : b.clr.ranges)
      if (r.kind == "GCHeap") clr_committed += r.end - r.start;
    EXPECT_EQ(committed, clr_committed);
    EXPECT_GT(committed, 80u << 20);  // GrowManagedHeap's 80 MiB of live arrays
    EXPECT_GT(reserve, 0u);
  }
}

// The written table reads back as an SOS maddress table with the same rows,
// nothing skipped; against the process's own maps, the diff leaves neither
// GC memory nor images unaccounted.
TEST(RuntimeTableBuilderTest, WrittenTableReadsBackAsMaddress) {
  Built b = Live();
  const std::string text = MaddressTableWriter::Write(b.table.rows, {"pageblame dotnet-regions: test"});
  absl::StatusOr<RegionTable> t = RegionTableReader::ParseString(text, "regions.txt");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->format, "sos-maddress");
  EXPECT_EQ(t->skipped, 0);
  ASSERT_EQ(t->regions.size(), b.table.rows.size());
  for (size_t i = 0; i < t->regions.size(); ++i) {
    EXPECT_EQ(t->regions[i].start, b.table.rows[i].start);
    EXPECT_EQ(t->regions[i].end, b.table.rows[i].end);
    EXPECT_EQ(t->regions[i].state, b.table.rows[i].state);
    EXPECT_EQ(t->regions[i].type, b.table.rows[i].type);
  }
  DiffResult d = Diff(b.os, *t);
  EXPECT_EQ(d.runtime_only.bytes, 0u);
  for (const Region& p : d.unaccounted.pieces) {
    EXPECT_FALSE(absl::StrContains(p.usage, "System.Private.CoreLib.dll")) << p.usage;
  }
}

TEST(MaddressTableWriterTest, HumanSize) {
  EXPECT_EQ(MaddressTableWriter::HumanSize(48 << 10), "48.00kb");
  EXPECT_EQ(MaddressTableWriter::HumanSize(1536 << 10), "1.50mb");
  EXPECT_EQ(MaddressTableWriter::HumanSize(uint64_t{3} << 30), "3.00gb");
  EXPECT_EQ(MaddressTableWriter::HumanSize(100), "0.10kb");
}

}  // namespace
}  // namespace pageblame::regions

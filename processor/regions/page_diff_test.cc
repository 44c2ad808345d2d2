#include "processor/regions/page_diff.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/regions/region_table_reader.h"

namespace pageblame::regions {
namespace {

Region R(uint64_t start, uint64_t end, std::string state = "MEM_COMMIT", int line = 0,
         std::string usage = "") {
  Region r;
  r.start = start;
  r.end = end;
  r.state = std::move(state);
  r.line = line;
  r.usage = std::move(usage);
  return r;
}

RegionTable Table(std::vector<Region> regions, bool has_state = true) {
  RegionTable t;
  t.format = "test";
  t.has_state = has_state;
  for (const Region& r : regions) t.regions.push_back(r);
  return t;
}

// A region half covered by a runtime range starting at its start: the seed
// calls it accounted; page-exact, the uncovered half is unaccounted.
TEST(DiffTest, HalfCoveredRegionReportsTheUncoveredHalf) {
  RegionTable a = Table({R(0x10000, 0x20000, "MEM_COMMIT", 7, "<unknown> [....]")});
  RegionTable m = Table({R(0x10000, 0x18000)});
  DiffResult d = Diff(a, m);
  ASSERT_EQ(d.unaccounted.pieces.size(), 1u);
  const Region& p = d.unaccounted.pieces[0];
  EXPECT_EQ(p.start, 0x18000u);
  EXPECT_EQ(p.end, 0x20000u);
  EXPECT_EQ(p.line, 7);  // carries its source region
  EXPECT_EQ(p.usage, "<unknown> [....]");
  EXPECT_EQ(d.unaccounted.bytes, 0x8000u);
  EXPECT_EQ(d.start_match_unaccounted.bytes, 0u);
  EXPECT_TRUE(d.runtime_only.pieces.empty());
}

// A region covered by two runtime ranges neither of which starts at its
// start: fully accounted page-exact; the seed calls all of it unaccounted.
TEST(DiffTest, RegionCoveredByTwoOffsetRangesIsAccounted) {
  RegionTable a = Table({R(0x30000, 0x40000)});
  RegionTable m = Table({R(0x2f000, 0x38000), R(0x38000, 0x41000)});
  DiffResult d = Diff(a, m);
  EXPECT_EQ(d.unaccounted.bytes, 0u);
  EXPECT_TRUE(d.unaccounted.pieces.empty());
  ASSERT_EQ(d.start_match_unaccounted.regions, 1u);
  EXPECT_EQ(d.start_match_unaccounted.bytes, 0x10000u);
  // The runtime's bytes outside the committed region are runtime-only.
  ASSERT_EQ(d.runtime_only.pieces.size(), 2u);
  EXPECT_EQ(d.runtime_only.bytes, 0x2000u);
  EXPECT_EQ(d.runtime_only.pieces[0].start, 0x2f000u);  // equal sizes: by address
  EXPECT_EQ(d.runtime_only.pieces[1].start, 0x40000u);
}

TEST(DiffTest, StatesDecideWhatCountsAndWhatCovers) {
  RegionTable a = Table({
      R(0x0, 0x10000, ""),                  // free row: neither counted nor claiming
      R(0x10000, 0x11000, "MEM_RESERVE"),   // not committed, but claims
      R(0x11000, 0x12000, "MEM_COMMIT"),
      R(0x12000, 0x13000, "MEM_FREE"),
  });
  RegionTable m = Table({
      R(0x11000, 0x12000, "MEM_RESERVE"),   // the runtime knows it: accounted
      R(0x10000, 0x11000, "MEM_COMMIT"),    // a's reserve claims it: not runtime-only
      R(0x0, 0x1000, "MEM_COMMIT"),         // a's free row does not claim it
      R(0x12000, 0x13000, "MEM_UNKNOWN"),   // not committed: never runtime-only
  });
  DiffResult d = Diff(a, m);
  EXPECT_EQ(d.unaccounted.bytes, 0u);
  ASSERT_EQ(d.runtime_only.pieces.size(), 1u);
  EXPECT_EQ(d.runtime_only.pieces[0].start, 0x0u);
  EXPECT_EQ(d.runtime_only.bytes, 0x1000u);
}

TEST(DiffTest, TablesWithoutStateCountEveryRegion) {
  RegionTable pmap = Table({R(0x1000, 0x5000, ""), R(0x8000, 0x9000, "")}, /*has_state=*/false);
  RegionTable list = Table({R(0x2000, 0x3000, "")}, /*has_state=*/false);
  DiffResult d = Diff(pmap, list);
  EXPECT_EQ(d.unaccounted.bytes, 0x4000u);
  ASSERT_EQ(d.unaccounted.pieces.size(), 3u);
  // Sorted by size descending, then address.
  EXPECT_EQ(d.unaccounted.pieces[0].start, 0x3000u);  // 0x2000 bytes
  EXPECT_EQ(d.unaccounted.pieces[1].start, 0x1000u);  // 0x1000 bytes, lower address
  EXPECT_EQ(d.unaccounted.pieces[2].start, 0x8000u);
}

// /proc maps of a .NET process: the GC's 47 GiB PROT_NONE reservation is a
// "---p" row. It is reserved memory, in no diff (it made "50.0 GiB
// unaccounted" against the runtime's table), while the runtime's claim on it
// still covers the other side.
TEST(DiffTest, NoAccessRowsOfMapsAreReservationsNotCommitted) {
  const std::string maps_text =
      "7f0000000000-7f0000400000 rw-p 00000000 00:00 0 \n"
      "7f0000400000-7fc000000000 ---p 00000000 00:00 0 \n"
      "7fc000000000-7fc000001000 ---s 00000000 00:00 0 \n";
  absl::StatusOr<RegionTable> maps = RegionTableReader::ParseString(maps_text, "app.maps");
  ASSERT_TRUE(maps.ok()) << maps.status();
  ASSERT_EQ(maps->regions.size(), 3u);
  EXPECT_TRUE(maps->IsCommitted(maps->regions[0]));
  EXPECT_FALSE(maps->IsCommitted(maps->regions[1]));
  EXPECT_FALSE(maps->IsCommitted(maps->regions[2]));
  EXPECT_TRUE(maps->IsClaimed(maps->regions[1]));
  RegionTable runtime = Table({R(0x7f0000000000, 0x7f0000100000)});
  DiffResult d = Diff(*maps, runtime);
  EXPECT_EQ(d.unaccounted.bytes, 0x300000u);  // the rw-p row's uncovered part only
  // A runtime row inside the reservation is claimed by the maps row.
  RegionTable gc = Table({R(0x7f0000500000, 0x7f0000600000)});
  EXPECT_EQ(Diff(*maps, gc).runtime_only.bytes, 0u);
}

TEST(DiffTest, OverlappingSourceRegionsAreCountedOnce) {
  RegionTable a = Table({R(0x1000, 0x3000, "MEM_COMMIT", 1), R(0x2000, 0x4000, "MEM_COMMIT", 2)});
  RegionTable m = Table({R(0x100000, 0x101000)});
  DiffResult d = Diff(a, m);
  EXPECT_EQ(d.unaccounted.bytes, 0x3000u);
  ASSERT_EQ(d.unaccounted.pieces.size(), 2u);
  EXPECT_EQ(d.unaccounted.pieces[0].line, 1);  // [0x1000,0x3000)
  EXPECT_EQ(d.unaccounted.pieces[1].line, 2);  // only [0x3000,0x4000)
  EXPECT_EQ(d.unaccounted.pieces[1].start, 0x3000u);
  EXPECT_EQ(d.unaccounted.source_regions, 2u);
  EXPECT_EQ(d.start_match_unaccounted.bytes, 0x4000u);  // the seed's plain sum
}

TEST(DiffTest, ARowCutByAClaimIsOneSourceRegionOfTwoPieces) {
  RegionTable a = Table({R(0x1000, 0x5000, "MEM_COMMIT", 1)});
  RegionTable m = Table({R(0x2000, 0x3000)});
  DiffResult d = Diff(a, m);
  ASSERT_EQ(d.unaccounted.pieces.size(), 2u);  // [0x1000,0x2000) and [0x3000,0x5000)
  EXPECT_EQ(d.unaccounted.source_regions, 1u);
  EXPECT_EQ(d.runtime_only.source_regions, 0u);
}

// WinDbg !address vs SOS maddress of the same dump. Expected numbers come
// from an independent Python computation over the raw files (merge the SOS
// ranges, subtract from each MEM_COMMIT WinDbg row), see docs/regions.md.
TEST(DiffTest, PeerSamples) {
  std::string dir = absl::StrCat(PAGEBLAME_SOURCE_DIR, "/processor/regions/testdata/");
  absl::StatusOr<RegionTable> a = RegionTableReader::DetectAndParse(dir + "windbg-address.output");
  absl::StatusOr<RegionTable> m = RegionTableReader::DetectAndParse(dir + "sos-maddress.output");
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(m.ok()) << m.status();
  DiffResult d = Diff(*a, *m);

  // The seed's rule reproduces its published result: 7 regions, 672 MiB.
  EXPECT_EQ(d.start_match_unaccounted.regions, 7u);
  EXPECT_EQ(d.start_match_unaccounted.bytes, 704999424u);
  EXPECT_EQ(d.start_match_unaccounted.bytes >> 20, 672u);

  EXPECT_EQ(d.unaccounted.pieces.size(), 12u);
  EXPECT_EQ(d.unaccounted.bytes, 658571264u);
  const Region& biggest = d.unaccounted.pieces[0];
  EXPECT_EQ(biggest.start, 0x78e12cc00000u);
  EXPECT_EQ(biggest.end, 0x78e138400000u);
  EXPECT_EQ(biggest.line, 205);
  EXPECT_EQ(biggest.usage, "<unknown> [................]");
  // The seed's 68 KB PAGE_EXECUTE_WRITECOPY region: SOS covers its last page
  // (HostCodeHeap at 78e848ed0000), so 64 KiB remain.
  const Region& small = d.unaccounted.pieces.back();
  EXPECT_EQ(small.start, 0x78e848ec0000u);
  EXPECT_EQ(small.end, 0x78e848ed0000u);
  EXPECT_EQ(small.protect, "PAGE_EXECUTE_WRITECOPY");

  EXPECT_EQ(d.runtime_only.pieces.size(), 59u);
  EXPECT_EQ(d.runtime_only.bytes, 2789376u);
  EXPECT_EQ(d.runtime_only.pieces[0].start, 0x78e84d00a000u);  // LoaderCodeHeap tail
  EXPECT_EQ(d.runtime_only.pieces[0].end, 0x78e84d140000u);
  EXPECT_EQ(d.runtime_only.pieces[0].usage, "LoaderCodeHeap");
  EXPECT_EQ(d.start_match_runtime_only.regions, 315u);

  // Every unaccounted piece lies inside a committed WinDbg row and outside
  // every SOS row.
  for (const Region& p : d.unaccounted.pieces) {
    for (const Region& r : m->regions) EXPECT_TRUE(p.end <= r.start || r.end <= p.start);
    const Region& src = a->regions[p.line - 3];
    EXPECT_EQ(src.state, "MEM_COMMIT");
    EXPECT_LE(src.start, p.start);
    EXPECT_GE(src.end, p.end);
  }
}

// traces/dotnet/ (record-dotnet.sh): the tables of one real .NET 10 process at
// one moment. Its file names carry the pid, so they are found by pattern.
std::string DotnetFile(const std::string& suffix) {
  std::string dir = absl::StrCat(PAGEBLAME_SOURCE_DIR, "/traces/dotnet");
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (absl::StartsWith(name, "dotnet-leak.") && absl::EndsWith(name, suffix)) {
      return e.path().string();
    }
  }
  return "";
}

struct TruthRow {
  std::string method;
  uint64_t start, end;
  bool reserved_only = false;  // PROT_NONE: reserved, never committed
};

// NAME.PID.truth.tsv: method, what, start, end, bytes, maps lines.
std::vector<TruthRow> ReadTruth(const std::string& path) {
  std::vector<TruthRow> rows;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#' || absl::StartsWith(line, "method\t")) continue;
    std::vector<std::string> f = absl::StrSplit(line, '\t');
    TruthRow r{f.at(0), 0, 0, absl::StrContains(f.at(1), "reserved part")};
    EXPECT_TRUE(absl::SimpleHexAtoi(f.at(2), &r.start)) << line;
    EXPECT_TRUE(absl::SimpleHexAtoi(f.at(3), &r.end)) << line;
    rows.push_back(r);
  }
  return rows;
}

uint64_t Overlap(const DiffList& pieces, uint64_t start, uint64_t end) {
  uint64_t n = 0;
  for (const Region& p : pieces.pieces) {
    uint64_t lo = std::max(p.start, start), hi = std::min(p.end, end);
    if (lo < hi) n += hi - lo;
  }
  return n;
}

TEST(DiffTest, DotnetRecordingMapsAndPmapAgree) {
  absl::StatusOr<RegionTable> maps = RegionTableReader::DetectAndParse(DotnetFile(".maps"));
  absl::StatusOr<RegionTable> pmap = RegionTableReader::DetectAndParse(DotnetFile(".pmap"));
  ASSERT_TRUE(maps.ok()) << maps.status();
  ASSERT_TRUE(pmap.ok()) << pmap.status();
  EXPECT_EQ(maps->format, "maps");
  EXPECT_EQ(pmap->format, "pmap");  // this kernel's pmap -XX (Pss_Dirty, KSM...)
  ASSERT_EQ(maps->regions.size(), pmap->regions.size());
  for (size_t i = 0; i < maps->regions.size(); ++i) {
    EXPECT_EQ(maps->regions[i].start, pmap->regions[i].start) << i;
    EXPECT_EQ(maps->regions[i].end, pmap->regions[i].end) << i;
  }
}

// Against the runtime's own ranges (a ClrMD range list, as bundled): every committed
// byte the app got from native code (NativeMemory.Alloc, AllocHGlobal, the
// MemoryMappedFile view, its own mmaps) is unaccounted, and none of its
// managed arrays are, nor the PROT_NONE part of its own reservation (a
// "---p" row is reserved, not committed). The truth file is the app's own
// record of its pointers.
TEST(DiffTest, DotnetRecordingLeavesTheNativeLeaksUnaccounted) {
  absl::StatusOr<RegionTable> maps = RegionTableReader::DetectAndParse(DotnetFile(".maps"));
  absl::StatusOr<RegionTable> clr = RegionTableReader::DetectAndParse(DotnetFile(".clr-regions.txt"));
  absl::StatusOr<RegionTable> truth = RegionTableReader::DetectAndParse(DotnetFile(".truth.ranges"));
  ASSERT_TRUE(maps.ok()) << maps.status();
  ASSERT_TRUE(clr.ok()) << clr.status();
  ASSERT_TRUE(truth.ok()) << truth.status();
  EXPECT_EQ(clr->format, "ranges");
  std::vector<TruthRow> rows = ReadTruth(DotnetFile(".truth.tsv"));
  ASSERT_EQ(rows.size(), truth->regions.size());

  DiffResult by_maps = Diff(*maps, *clr);
  DiffResult by_truth = Diff(*truth, *clr);
  uint64_t native = 0;
  for (const TruthRow& r : rows) {
    const uint64_t size = r.end - r.start;
    if (r.method == "GrowManagedHeap" || r.reserved_only) {
      EXPECT_EQ(Overlap(by_maps.unaccounted, r.start, r.end), 0u) << r.method << std::hex << r.start;
    } else {
      native += size;
      EXPECT_EQ(Overlap(by_maps.unaccounted, r.start, r.end), size) << r.method << std::hex << r.start;
    }
  }
  EXPECT_EQ(native, 98u << 20);  // 32 + 18 + 16 + 24 + 8 MiB committed, as the app allocates
  // The truth table is a range list (no protection column): all of it counts.
  EXPECT_EQ(by_truth.unaccounted.bytes, native + (56u << 20));
}


// Resident bytes of a table with Rss: a row wholly unaccounted keeps its
// Rss, exact; a row partly covered gives bounds and its pieces no rss.
TEST(DiffTest, ResidentBytesExactForWholeRowsBoundedForParts) {
  absl::StatusOr<RegionTable> a = RegionTableReader::ParseString(
      "7f0000000000-7f0000010000 rw-p 00000000 00:00 0\nRss: 40 kB\n"   // 64 KiB, whole
      "7f0000010000-7f0000020000 rw-p 00000000 00:00 0\nRss: 60 kB\n"   // 64 KiB, half covered
      "7f0000020000-7f0000030000 ---p 00000000 00:00 0\nRss: 0 kB\n"    // reservation: not counted
      "7f0000030000-7f0000031000 rw-p 00000000 00:00 0\nRss: 4 kB\n",   // covered
      "a.smaps");
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(a->has_rss);
  absl::StatusOr<RegionTable> m =
      RegionTableReader::ParseString("0x7f0000018000-0x7f0000020000\n0x7f0000030000-0x7f0000031000\n", "m");
  ASSERT_TRUE(m.ok()) << m.status();
  DiffResult d = Diff(*a, *m);
  ASSERT_EQ(d.unaccounted.pieces.size(), 2u);
  EXPECT_EQ(d.unaccounted.pieces[0].start, 0x7f0000000000u);
  EXPECT_EQ(d.unaccounted.pieces[0].rss, 40u * 1024);
  EXPECT_EQ(d.unaccounted.pieces[1].start, 0x7f0000010000u);
  EXPECT_FALSE(d.unaccounted.pieces[1].rss.has_value());
  ASSERT_TRUE(d.unaccounted.resident.has_value());
  const ResidentBytes& r = *d.unaccounted.resident;
  EXPECT_EQ(r.whole_rows, 1u);
  EXPECT_EQ(r.rss, 40u * 1024);
  EXPECT_EQ(r.partly_rows, 1u);
  EXPECT_EQ(r.partly_bytes, 32u * 1024);
  EXPECT_EQ(r.partly_at_least, 28u * 1024);  // 60 KiB resident, the covered half holds <= 32
  EXPECT_EQ(r.partly_at_most, 32u * 1024);
  // The other direction counts the ranges table: no Rss.
  EXPECT_FALSE(d.runtime_only.resident.has_value());
  // A table without Rss: unknown.
  EXPECT_FALSE(Diff(*m, *a).unaccounted.resident.has_value());
}

}  // namespace
}  // namespace pageblame::regions

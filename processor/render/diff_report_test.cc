// The diff report on the real peer samples (processor/regions/testdata/, the
// same .NET process seen by WinDbg !address and SOS !maddress): the JSON
// follows the CLI contract and carries exactly regions::Diff's numbers.
#include "processor/base/format.h"
#include "processor/render/diff_report.h"

#include <cstdio>
#include <cstdlib>
#include <set>
#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/regions/region_table_reader.h"

namespace pageblame::render {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

regions::RegionTable Sample(const std::string& name) {
  auto t = regions::RegionTableReader::DetectAndParse(std::string(PAGEBLAME_SOURCE_DIR) +
                                                      "/processor/regions/testdata/" + name);
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) std::abort();
  return *t;
}

uint64_t ParseHex(const Json& j) { return std::stoull(j.get<std::string>(), nullptr, 16); }

void ExpectListMatches(const Json& j, const regions::DiffList& list) {
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j.size(), 4u);
  EXPECT_EQ(j["bytes"].get<uint64_t>(), list.bytes);
  // WinDbg and SOS tables have no Rss: resident bytes unknown, null.
  EXPECT_TRUE(j["rss"].is_null());
  EXPECT_TRUE(j["rss_partly"].is_null());
  ASSERT_EQ(j["pieces"].size(), list.pieces.size());
  uint64_t sum = 0;
  for (size_t i = 0; i < list.pieces.size(); ++i) {
    const Json& p = j["pieces"][i];
    std::set<std::string> keys;
    for (const auto& [k, v] : p.items()) keys.insert(k);
    EXPECT_EQ(keys, (std::set<std::string>{"start", "end", "bytes", "type", "state", "protect", "usage", "rss"}));
    EXPECT_TRUE(p["rss"].is_null());
    EXPECT_EQ(ParseHex(p["start"]), list.pieces[i].start);
    EXPECT_EQ(ParseHex(p["end"]), list.pieces[i].end);
    EXPECT_EQ(p["bytes"].get<uint64_t>(), ParseHex(p["end"]) - ParseHex(p["start"]));
    EXPECT_EQ(p["state"], list.pieces[i].state);
    sum += p["bytes"].get<uint64_t>();
  }
  EXPECT_EQ(sum, list.bytes);
}

TEST(DiffReportTest, JsonCarriesDiffsNumbersOnThePeerSamples) {
  regions::RegionTable a = Sample("windbg-address.output");
  regions::RegionTable m = Sample("sos-maddress.output");
  regions::DiffResult d = regions::Diff(a, m);
  ASSERT_GT(d.unaccounted.bytes, 0u);
  ASSERT_GT(d.runtime_only.bytes, 0u);
  Json j = DiffJson(d);
  EXPECT_EQ(j.size(), 2u);
  ExpectListMatches(j["unaccounted"], d.unaccounted);
  ExpectListMatches(j["runtime_only"], d.runtime_only);
  // Pieces of the WinDbg table keep its columns.
  EXPECT_EQ(j["unaccounted"]["pieces"][0]["type"], "MEM_PRIVATE");
  EXPECT_EQ(j["unaccounted"]["pieces"][0]["state"], "MEM_COMMIT");
}

TEST(DiffReportTest, TextHasBothTotalsAndTheSeedsNumber) {
  regions::DiffResult d = regions::Diff(Sample("windbg-address.output"), Sample("sos-maddress.output"));
  std::string t = DiffText(d, "A.txt", "M.txt");
  EXPECT_THAT(t, Not(HasSubstr("resident")));  // no Rss in either table
  EXPECT_THAT(t, HasSubstr("unaccounted: " + GroupedNumber(d.unaccounted.bytes) + " bytes"));
  EXPECT_THAT(t, HasSubstr("runtime only: " + GroupedNumber(d.runtime_only.bytes) + " bytes"));
  EXPECT_THAT(t, HasSubstr(GroupedNumber(d.start_match_unaccounted.bytes)));
  uint64_t delta = d.start_match_unaccounted.bytes - d.unaccounted.bytes;
  EXPECT_THAT(t, HasSubstr("overstates the unaccounted bytes here by " + GroupedNumber(delta)));
  // One table row per piece.
  size_t rows = 0;
  for (size_t at = t.find("\n  0x"); at != std::string::npos; at = t.find("\n  0x", at + 1)) ++rows;
  EXPECT_EQ(rows, d.unaccounted.pieces.size() + d.runtime_only.pieces.size());
}

TEST(DiffReportTest, MapsTablesHaveNullColumns) {
  auto a = regions::RegionTableReader::ParseString("1000-5000 rw-p 00000000 00:00 0\n", "a.maps");
  auto m = regions::RegionTableReader::ParseString("0x2000-0x3000\n", "m.txt");
  ASSERT_TRUE(a.ok() && m.ok());
  Json j = DiffJson(regions::Diff(*a, *m));
  EXPECT_EQ(j["unaccounted"]["bytes"], 0x3000);
  ASSERT_EQ(j["unaccounted"]["pieces"].size(), 2u);
  EXPECT_TRUE(j["unaccounted"]["pieces"][0]["type"].is_null());
  EXPECT_EQ(j["unaccounted"]["pieces"][0]["protect"], "rw-p");
  EXPECT_EQ(j["runtime_only"]["bytes"], 0);
}

// A table with Rss (the real pmap -XX of testdata/rss-sample.c) against a
// range list covering all of one row and half of another.
TEST(DiffReportTest, ResidentBytesOfATableWithRss) {
  regions::RegionTable a = Sample("rss-sample.pmap-XX");
  ASSERT_TRUE(a.has_rss);
  // The first row whole, and the second half of the biggest rw-p row.
  std::optional<regions::Region> big;
  size_t big_index = 0;
  for (size_t i = 0; i < a.regions.size(); ++i) {
    const regions::Region r = a.regions[i];
    if (r.protect == "rw-p" && (!big || r.size() > big->size())) {
      big = r;
      big_index = i;
    }
  }
  ASSERT_TRUE(big.has_value());
  const uint64_t mid = big->start + big->size() / 2;
  auto m = regions::RegionTableReader::ParseString(
      Hex(a.regions[0].start) + "-" + Hex(a.regions[0].end) + "\n" + Hex(mid) + "-" + Hex(big->end) + "\n", "m");
  ASSERT_TRUE(m.ok()) << m.status();
  regions::DiffResult d = regions::Diff(a, *m);
  uint64_t whole_rss = 0;
  for (size_t i = 1; i < a.regions.size(); ++i) {
    const regions::Region r = a.regions[i];
    if (i != big_index && a.IsCommitted(r)) whole_rss += *r.rss;
  }
  Json j = DiffJson(d)["unaccounted"];
  EXPECT_EQ(j["rss"].get<uint64_t>(), whole_rss);
  EXPECT_EQ(j["rss_partly"]["rows"], 1);
  EXPECT_EQ(j["rss_partly"]["bytes"].get<uint64_t>(), mid - big->start);
  EXPECT_EQ(j["rss_partly"]["rss_at_most"].get<uint64_t>(), std::min(*big->rss, mid - big->start));
  uint64_t pieces_rss = 0;
  for (const Json& p : j["pieces"]) {
    if (ParseHex(p["start"]) == big->start) {
      EXPECT_TRUE(p["rss"].is_null());  // part of a row: its Rss is the row's
    } else {
      pieces_rss += p["rss"].get<uint64_t>();
    }
  }
  EXPECT_EQ(pieces_rss, whole_rss);
  EXPECT_TRUE(DiffJson(d)["runtime_only"]["rss"].is_null());  // the list has no Rss

  std::string t = DiffText(d, "a.pmap", "m.txt");
  EXPECT_THAT(t, HasSubstr("  resident (a.pmap's Rss): " + GroupedNumber(whole_rss) + " bytes"));
  EXPECT_THAT(t, HasSubstr("the 1 row partly in it add "));
  EXPECT_THAT(t, HasSubstr("        rss  type"));
  EXPECT_THAT(t, HasSubstr("       part  -"));
}

TEST(DiffReportTest, RssNote) {
  auto t = regions::RegionTableReader::ParseString(
      "5585e95a2000 r--p 00000000  08:01  915517  48  48  24 dotnet\n", "p.txt");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(RssNote(*t, "p.txt"), HasSubstr("p.txt: resident bytes unknown: headerless pmap"));
  EXPECT_EQ(RssNote(Sample("rss-sample.pmap-XX"), "x"), "");
}

TEST(DiffReportTest, SkippedNote) {
  auto t = regions::RegionTableReader::ParseString(
      "Memory regions found by windbg address but not by sos maddress: 1\n"
      "78e13f400000 - 78e13f401000 Size: 4KB    Type: MEM_PRIVATE  State: MEM_COMMIT   "
      "Protection: PAGE_READWRITE           Kind: <unknown>            Usage: [...]\n"
      "Total unaccounted size: 4KB\n"
      "Memory regions found by sos maddress but not by windbg address: 1\n"
      "78e84b3a0000 - 78e84b3b0000 Size: 64KB     Type: MEM_PRIVATE  State: MEM_COMMIT   "
      "Protection: PAGE_READWRITE           Kind: HighFrequencyHeap    Usage:\n",
      "diff.txt");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_GT(t->skipped, 0);
  std::string note = SkippedNote(*t, "diff.txt");
  EXPECT_THAT(note, HasSubstr("diff.txt: " + std::to_string(t->skipped)));
  EXPECT_THAT(note, HasSubstr("skipped (first: line "));
  regions::RegionTable clean;
  EXPECT_EQ(SkippedNote(clean, "x"), "");
}

TEST(DiffReportTest, GroupedNumber) {
  EXPECT_EQ(GroupedNumber(0), "0");
  EXPECT_EQ(GroupedNumber(999), "999");
  EXPECT_EQ(GroupedNumber(1000), "1,000");
  EXPECT_EQ(GroupedNumber(658571264), "658,571,264");
  EXPECT_EQ(GroupedNumber(18446744073709551615ull), "18,446,744,073,709,551,615");
}

// What `file` holds after write(file).
template <typename Write>
std::string Written(Write write) {
  char* text = nullptr;
  size_t size = 0;
  std::FILE* f = open_memstream(&text, &size);
  EXPECT_NE(f, nullptr);
  EXPECT_TRUE(write(f));
  std::fclose(f);
  std::string out(text, size);
  std::free(text);
  return out;
}

// `pageblame diff` writes its answer as it makes it (a table of millions of
// rows): byte for byte what the JSON document and the text say, on tables
// with and without Rss, with pieces of part rows, and with no pieces.
TEST(DiffReportTest, WrittenAsMadeIsTheSameAnswer) {
  const regions::RegionTable windbg = Sample("windbg-address.output"), sos = Sample("sos-maddress.output");
  const regions::RegionTable pmap = Sample("rss-sample.pmap-XX"), smaps = Sample("rss-sample.smaps");
  auto half = regions::RegionTableReader::ParseString(
      Hex(pmap.regions.start(0)) + "-" + Hex(pmap.regions.start(0) + 4096) + "\n", "m");
  ASSERT_TRUE(half.ok()) << half.status();
  const std::pair<const regions::RegionTable*, const regions::RegionTable*> pairs[] = {
      {&windbg, &sos}, {&pmap, &*half}, {&pmap, &smaps}, {&pmap, &pmap}};
  for (const auto& [a, m] : pairs) {
    const regions::DiffResult d = regions::Diff(*a, *m);
    EXPECT_EQ(Written([&](std::FILE* f) { return WriteDiffJson(d, f); }), DumpJson(DiffJson(d)) + "\n");
    EXPECT_EQ(Written([&](std::FILE* f) { return WriteDiffText(d, "a", "m", f); }), DiffText(d, "a", "m"));
  }
}

}  // namespace
}  // namespace pageblame::render

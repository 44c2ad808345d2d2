// Resident bytes from a table without a trace (issue 28): the Rss column of a
// real pmap -XX through `pageblame diff` and `pageblame attribute`, every
// figure recomputed here from the files themselves.
//
// traces/dotnet/dotnet-leak.23474.pmap is `pmap -XX` of the .NET app when it
// said READY, and dotnet-leak.23474.clr-regions.txt the runtime's own ranges
// from its dump (traces/MANIFEST.md).
#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli_runner.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

const std::string kPmap = TracePath("dotnet/dotnet-leak.23474.pmap");
const std::string kRuntime = TracePath("dotnet/dotnet-leak.23474.clr-regions.txt");

struct Row {
  uint64_t start = 0, end = 0, rss = 0;
  bool committed = false;  // some access: not a ---p reservation
};

std::vector<std::string> Fields(const std::string& line) {
  return absl::StrSplit(line, ' ', absl::SkipEmpty());
}

// The rows of a pmap -X/-XX file with its header: Address, Perm, Size and
// Rss found by name, rows up to the ==== footer.
std::vector<Row> ReadPmap(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::map<std::string, size_t> col;
  std::vector<Row> rows;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = Fields(line);
    if (f.empty()) continue;
    if (f[0] == "Address") {
      for (size_t i = 0; i < f.size(); ++i) col[f[i]] = i;
      continue;
    }
    if (absl::StrContains(line, "====")) break;
    if (col.empty() || f.size() <= col["Rss"]) continue;
    Row r;
    uint64_t kib = 0, rss = 0;
    EXPECT_TRUE(absl::SimpleHexAtoi(f[col["Address"]], &r.start)) << line;
    EXPECT_TRUE(absl::SimpleAtoi(f[col["Size"]], &kib)) << line;
    EXPECT_TRUE(absl::SimpleAtoi(f[col["Rss"]], &rss)) << line;
    r.end = r.start + kib * 1024;
    r.rss = rss * 1024;
    r.committed = f[col["Perm"]].substr(0, 3) != "---";
    rows.push_back(r);
  }
  return rows;
}

// The runtime table's START-END ranges (END exclusive), merged.
std::vector<std::pair<uint64_t, uint64_t>> ReadRanges(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::vector<std::pair<uint64_t, uint64_t>> ranges, merged;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> se = absl::StrSplit(Fields(line)[0], '-');
    uint64_t s = 0, e = 0;
    EXPECT_TRUE(se.size() == 2 && absl::SimpleHexAtoi(se[0], &s) && absl::SimpleHexAtoi(se[1], &e)) << line;
    ranges.push_back({s, e});
  }
  std::sort(ranges.begin(), ranges.end());
  for (const auto& r : ranges) {
    if (!merged.empty() && r.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, r.second);
    } else {
      merged.push_back(r);
    }
  }
  return merged;
}

uint64_t Covered(const Row& row, const std::vector<std::pair<uint64_t, uint64_t>>& ranges) {
  uint64_t n = 0;
  for (const auto& [s, e] : ranges) {
    const uint64_t lo = std::max(s, row.start), hi = std::min(e, row.end);
    if (lo < hi) n += hi - lo;
  }
  return n;
}

uint64_t Hex(const Json& j) { return std::stoull(j.get<std::string>(), nullptr, 16); }

// diff's resident figure is the Rss of the committed rows no runtime range
// touches; rows it covers in part are apart, with bounds.
TEST(TableRssCliTest, DiffOfARealPmapCountsTheRssOfTheUnaccountedRows) {
  const std::vector<Row> rows = ReadPmap(kPmap);
  const auto ranges = ReadRanges(kRuntime);
  ASSERT_GT(rows.size(), 200u);
  ASSERT_GT(ranges.size(), 20u);  // after merging
  uint64_t whole_rss = 0, whole_rows = 0, part_rows = 0, part_bytes = 0, at_least = 0, at_most = 0;
  for (const Row& r : rows) {
    if (!r.committed) continue;
    const uint64_t size = r.end - r.start, covered = Covered(r, ranges), part = size - covered;
    if (covered == 0) {
      whole_rss += r.rss;
      ++whole_rows;
    } else if (part > 0) {
      ++part_rows;
      part_bytes += part;
      at_least += r.rss > covered ? r.rss - covered : 0;
      at_most += std::min(r.rss, part);
    }
  }
  // The recording has both kinds, and resident bytes in the exact part.
  ASSERT_GT(whole_rss, 10u << 20);
  ASSERT_GT(part_rows, 0u);

  CliRun diff = Pageblame("diff --json " + kPmap + " " + kRuntime);
  ASSERT_EQ(diff.exit_code, 0) << diff.err;
  const Json u = Json::parse(diff.out)["unaccounted"];
  EXPECT_EQ(u["rss"].get<uint64_t>(), whole_rss);
  EXPECT_EQ(u["rss_partly"]["rows"].get<uint64_t>(), part_rows);
  EXPECT_EQ(u["rss_partly"]["bytes"].get<uint64_t>(), part_bytes);
  EXPECT_EQ(u["rss_partly"]["rss_at_least"].get<uint64_t>(), at_least);
  EXPECT_EQ(u["rss_partly"]["rss_at_most"].get<uint64_t>(), at_most);
  // Per piece: whole rows carry their Rss, parts of rows none.
  uint64_t pieces_rss = 0, whole_pieces = 0;
  for (const Json& p : u["pieces"]) {
    if (p["rss"].is_null()) continue;
    pieces_rss += p["rss"].get<uint64_t>();
    ++whole_pieces;
  }
  EXPECT_EQ(pieces_rss, whole_rss);
  EXPECT_EQ(whole_pieces, whole_rows);
  // The runtime's table has no Rss.
  EXPECT_TRUE(Json::parse(diff.out)["runtime_only"]["rss"].is_null());

  CliRun text = Pageblame("diff " + kPmap + " " + kRuntime);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("  resident (" + kPmap + "'s Rss): "));
  EXPECT_THAT(text.out, HasSubstr(" in the " + std::to_string(whole_rows) + " rows wholly in this list"));
}

// Each stack's table_rss recomputed from the regions of an attribute
// answer: the Rss of the regions its calls made whole (exact); for regions
// it made in part, at least Rss minus the rest of the region and at most
// min(Rss, its bytes); a region without rss (a diff piece that is part of a
// row) between 0 and its bytes. Returns the stacks' exact total.
uint64_t ExpectStackTableRss(const Json& answer) {
  struct Expected {
    uint64_t exact = 0, regions = 0, bytes = 0, at_least = 0, at_most = 0;
  };
  std::map<std::string, Expected> by_stack;  // the stack's frames, as JSON
  for (const Json& region : answer["regions"]) {
    const uint64_t size = region["bytes"].get<uint64_t>();
    std::map<std::string, uint64_t> made;  // this region's bytes by stack
    for (const Json& s : region["stacks"]) made[s["origin"]["stack"].dump()] += s["bytes"].get<uint64_t>();
    for (const auto& [stack, bytes] : made) {
      Expected& e = by_stack[stack];
      if (region["table_rss"].is_null()) {
        ++e.regions;
        e.bytes += bytes;
        e.at_most += bytes;
        continue;
      }
      const uint64_t rss = region["table_rss"].get<uint64_t>();
      if (bytes == size) {
        e.exact += rss;
      } else {
        ++e.regions;
        e.bytes += bytes;
        e.at_least += rss > size - bytes ? rss - (size - bytes) : 0;
        e.at_most += std::min(rss, bytes);
      }
    }
  }
  EXPECT_EQ(answer["stacks"].size(), by_stack.size());
  uint64_t exact = 0;
  for (const Json& s : answer["stacks"]) {
    const Expected& e = by_stack[s["origin"]["stack"].dump()];
    EXPECT_EQ(s["table_rss"].get<uint64_t>(), e.exact);
    EXPECT_EQ(s["table_rss_partly"]["regions"].get<uint64_t>(), e.regions);
    EXPECT_EQ(s["table_rss_partly"]["bytes"].get<uint64_t>(), e.bytes);
    EXPECT_EQ(s["table_rss_partly"]["rss_at_least"].get<uint64_t>(), e.at_least);
    EXPECT_EQ(s["table_rss_partly"]["rss_at_most"].get<uint64_t>(), e.at_most);
    exact += e.exact;
  }
  return exact;
}

const std::string kAttribute =
    "attribute --by create -i " + TracePath("dotnet/dotnet-leak.data") + " --pid 23474 --perf-map-dir " + TracePath("dotnet");

// attribute --regions PMAP: each region keeps its row's Rss, and each stack
// gets the table rss of what it made.
TEST(TableRssCliTest, AttributeCarriesTheRowsRss) {
  const std::vector<Row> rows = ReadPmap(kPmap);
  std::map<uint64_t, uint64_t> rss_at;  // start -> Rss
  for (const Row& r : rows) rss_at[r.start] = r.rss;
  CliRun run = Pageblame(kAttribute + " --json --regions " + kPmap);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Json answer = Json::parse(run.out);
  ASSERT_EQ(answer["regions"].size(), rows.size());
  for (const Json& region : answer["regions"]) {
    const uint64_t start = Hex(region["start"]);
    ASSERT_TRUE(rss_at.count(start)) << region["start"];
    EXPECT_EQ(region["table_rss"].get<uint64_t>(), rss_at[start]) << region["start"];
  }
  EXPECT_GT(ExpectStackTableRss(answer), 10u << 20);  // the app's leaks: whole mappings, touched

  // The first screen has a resident column from the table; --detail the
  // per-region and per-stack figures.
  CliRun top = Pageblame(kAttribute + " --regions " + kPmap);
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_THAT(top.out, HasSubstr("committed    resident  regions"));
  CliRun text = Pageblame(kAttribute + " --detail --regions " + kPmap);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr(", table rss "));
  EXPECT_THAT(text.out, HasSubstr("  rss "));
}

// attribute --address PMAP --maddress RUNTIME: the diff's pieces that are
// whole rows keep their Rss; those that are parts of rows have none.
TEST(TableRssCliTest, AttributeOfTheDiffCarriesTheWholeRowsRss) {
  CliRun diff = Pageblame("diff --json " + kPmap + " " + kRuntime);
  ASSERT_EQ(diff.exit_code, 0) << diff.err;
  const Json pieces = Json::parse(diff.out)["unaccounted"]["pieces"];
  CliRun run = Pageblame(kAttribute + " --json --address " + kPmap + " --maddress " + kRuntime);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Json answer = Json::parse(run.out);
  ASSERT_EQ(answer["regions"].size(), pieces.size());
  size_t unknown = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    EXPECT_EQ(answer["regions"][i]["table_rss"], pieces[i]["rss"]) << i;
    unknown += pieces[i]["rss"].is_null();
  }
  EXPECT_GT(unknown, 0u);
  EXPECT_GT(ExpectStackTableRss(answer), 10u << 20);
}

// A table without Rss: every resident field is null, never 0.
TEST(TableRssCliTest, TablesWithoutRssSayNull) {
  const std::string maps = TracePath("dotnet/dotnet-leak.23474.maps");
  CliRun diff = Pageblame("diff --json " + maps + " " + kRuntime);
  ASSERT_EQ(diff.exit_code, 0) << diff.err;
  const Json u = Json::parse(diff.out)["unaccounted"];
  EXPECT_TRUE(u["rss"].is_null());
  EXPECT_TRUE(u["rss_partly"].is_null());
  ASSERT_FALSE(u["pieces"].empty());
  for (const Json& p : u["pieces"]) EXPECT_TRUE(p["rss"].is_null());
  CliRun text = Pageblame("diff " + maps + " " + kRuntime);
  EXPECT_THAT(text.out, ::testing::Not(HasSubstr("resident")));
}

// A headerless pmap -X cannot say which column is Rss: stderr says so, the
// answer has no resident bytes, and the exit is 0.
TEST(TableRssCliTest, HeaderlessPmapXSaysWhyRssIsUnknown) {
  const std::string x = SourceDir() + "/processor/regions/testdata/rss-sample.pmap-X-q";
  CliRun diff = Pageblame("diff --json " + x + " " + kRuntime);
  ASSERT_EQ(diff.exit_code, 0) << diff.err;
  EXPECT_THAT(diff.err, HasSubstr(x + ": resident bytes unknown: headerless pmap"));
  EXPECT_TRUE(Json::parse(diff.out)["unaccounted"]["rss"].is_null());
}

// Issue 44: the real pmap -XX with its header edited as the fuzz campaign
// did. With two names taken out, Rss was read from KernelPageSize (200 KiB
// resident instead of 104.3 MiB, exit 0); a repeated or an added name read
// it from Pss. Now each is one line naming the file and the first row that
// does not fit (or the header), exit 1.
TEST(TableRssCliTest, AHeaderThatDoesNotFitTheRowsIsAnErrorNotAShift) {
  std::ifstream in(kPmap);
  const std::string original((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(original.find("         Address Perm"), original.find('\n') + 1) << "the header is line 2";
  auto edited = [&](const std::string& name, const std::string& from, const std::string& to) {
    std::string text = original;
    const size_t at = text.find(from);
    EXPECT_LT(at, text.find('\n', text.find('\n') + 1)) << from << " is not in the header";
    text.replace(at, from.size(), to);
    const std::string path = ScratchPath(name);
    std::ofstream(path) << text;
    return path;
  };
  struct Case {
    std::string path, message;
  } cases[] = {
      {edited("two-missing.pmap", " KernelPageSize MMUPageSize", ""),
       ":3: expected 'Address Perm Offset Device Inode Size Rss Pss"},
      {edited("repeated.pmap", " Pss ", " Rss "), ":2: pmap header names 'Rss' twice"},
      {edited("added.pmap", " Size ", " Size Extra "), ":3: expected 'Address Perm Offset Device Inode Size Extra"},
  };
  for (const Case& c : cases) {
    for (const char* json : {"", "--json "}) {
      CliRun r = Pageblame(std::string("diff ") + json + c.path + " " + kRuntime);
      ExpectOneLineError(r, c.path + c.message);
      EXPECT_EQ(r.exit_code, 1) << c.path;
    }
  }
  // The file as pmap wrote it: the resident bytes of the unaccounted rows.
  CliRun ok = Pageblame("diff " + kPmap + " " + kRuntime);
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_THAT(ok.out, HasSubstr("109,367,296 bytes (104.3 MiB) in the 50 rows wholly in this list"));
}

}  // namespace
}  // namespace pageblame::testing

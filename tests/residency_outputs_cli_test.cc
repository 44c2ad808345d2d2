// Resident bytes in every answer, on the bundled residency recording
// (traces/residency.data + .rss: traces/src/residency.c, whose snapshot
// requested while it waited equals the kernel's smaps at that pause,
// residency_trace_test.cc). Asked at that snapshot's moment:
//   - maps: per smaps row, the rss of the regions inside it is smaps' Rss;
//   - attribute --regions SMAPS: per stack, the snapshot's rss equals the
//     table's own Rss (the kernel's, read at the same pause), and the stacks
//     of the program's functions hold the pages it says it touched, ranked
//     by resident bytes by default;
//   - growth, query, pprof: the same bytes;
// and without snapshots or with broken ones: null, a warning, or exit 1.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "processor/base/temp_dir_for_test.h"
#include "processor/residency/snapshot_file.h"
#include "tests/cli_runner.h"
#include "tests/residency_fixtures.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;
constexpr uint64_t kPage = 4096;

struct Pause {
  uint32_t pid = 0;
  std::string at;  // the requested snapshot's time, as --at takes it
  std::vector<TouchedRegion> regions;
};

// The program's pid, its regions, and when the requested snapshot was taken.
Pause FindPause() {
  Pause p;
  for (const auto& e : std::filesystem::directory_iterator(TracePath("truth"))) {
    const std::string name = e.path().filename();
    if (name.rfind("residency.", 0) == 0) p.regions = ReadTouchedRegions(e.path());
  }
  if (p.regions.empty()) return p;
  p.pid = p.regions[0].pid;
  auto file = residency::ReadSnapshotFile(TracePath("residency.data.rss"));
  if (!file.ok()) return p;
  for (const residency::ResidencySnapshot& s : file->snapshots) {
    // perf script's microseconds, rounded up: the snapshot is at or before it.
    if (s.pid == p.pid && s.reason == residency::SnapshotReason::kRequested) {
      p.at = absl::StrFormat("%.6f", (s.time / 1000 + 1) / 1e6);
    }
  }
  return p;
}

std::string Args(const Pause& p) {
  return absl::StrCat(" -i ", TracePath("residency.data"), " --pid ", p.pid, " --at ", p.at);
}

std::string Smaps(const Pause& p) { return TracePath(absl::StrCat("maps/residency.", p.pid, ".pause.smaps")); }

Json RunJson(const std::string& args) {
  CliRun r = Pageblame(args);
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
  return r.exit_code == 0 ? Json::parse(r.out) : Json();
}

uint64_t HexOf(const Json& v) { return std::stoull(v.get<std::string>(), nullptr, 16); }

std::string FirstAppFunction(const Json& call) {
  const Json& i = call["first_app_frame"];
  return i.is_null() ? "" : call["stack"][i.get<size_t>()]["symbol"].get<std::string>();
}

TEST(ResidencyOutputsTest, MapsRssOfEveryRowIsTheKernelsRss) {
  const Pause p = FindPause();
  ASSERT_FALSE(p.at.empty());
  const Json maps = RunJson("maps --json" + Args(p));
  size_t rows = 0;
  for (const SmapsRow& row : ReadSmapsFile(Smaps(p))) {
    if (row.map.perms.substr(0, 3) == "---" || row.map.path == "[vsyscall]") continue;
    uint64_t rss = 0;
    bool known = false;
    for (const Json& v : maps) {
      if (HexOf(v["start"]) < row.map.start || HexOf(v["end"]) > row.map.end || v["rss"].is_null()) continue;
      rss += v["rss"].get<uint64_t>();
      known = true;
    }
    SCOPED_TRACE(row.map.path);
    EXPECT_TRUE(known) << absl::StrCat(absl::Hex(row.map.start));
    EXPECT_EQ(rss, row.rss) << absl::StrCat(absl::Hex(row.map.start));
    ++rows;
  }
  EXPECT_GT(rows, 20u);
  // PROT_NONE regions (guard pages) are never read: unknown, not 0.
  bool none_seen = false;
  for (const Json& v : maps) {
    if (v["prot"] == "---") {
      none_seen = true;
      EXPECT_TRUE(v["rss"].is_null()) << v["start"];
    }
  }
  EXPECT_TRUE(none_seen);
  CliRun text = Pageblame("maps" + Args(p));
  EXPECT_THAT(text.out, HasSubstr("resident: snapshot at "));
  EXPECT_THAT(text.out, HasSubstr("range                     prot       size   resident"));
}

TEST(ResidencyOutputsTest, AttributeRanksStacksByTheirResidentPages) {
  const Pause p = FindPause();
  ASSERT_FALSE(p.at.empty());
  const Json a = RunJson("attribute --json --regions " + Smaps(p) + Args(p));
  ASSERT_FALSE(a["rss"].is_null());
  // The kernel's own per-row Rss, attributed the same way, agrees stack by
  // stack where the stack made whole rows.
  uint64_t previous = UINT64_MAX;
  std::map<std::string, uint64_t> by_function;
  for (const Json& s : a["stacks"]) {
    // Unknown only where no snapshot read a page: PROT_NONE guard pages.
    if (s["rss"].is_null()) {
      EXPECT_EQ(s["committed_bytes"], 0) << s.dump();
      continue;
    }
    const uint64_t rss = s["rss"].get<uint64_t>();
    EXPECT_LE(rss, previous) << "ranked by resident bytes";
    previous = rss;
    if (s["table_rss_partly"]["regions"] == 0) {
      EXPECT_EQ(s["table_rss"], s["rss"]) << s["commit"].dump();
    }
    by_function[FirstAppFunction(s["commit"])] += rss;
  }
  for (const TouchedRegion& r : p.regions) {
    if (r.pid != p.pid) continue;
    const std::string function = r.name == "every4th" ? "map_every4th"
                                 : r.name == "cow"    ? "map_cow"
                                 : r.name == "file"   ? "map_file"
                                                      : "big_stack";
    SCOPED_TRACE(function);
    if (r.name == "every4th" || r.name == "cow") {
      EXPECT_EQ(by_function[function], r.touched * kPage);
    } else {
      // The stack's frames above its array; the file's fault-around.
      EXPECT_GE(by_function[function], r.touched * kPage);
      EXPECT_LE(by_function[function], r.touched * kPage + 64 * kPage);
    }
  }
  CliRun text = Pageblame("attribute --regions " + Smaps(p) + Args(p));
  EXPECT_THAT(text.out, HasSubstr("the application's methods by resident bytes"));
  EXPECT_THAT(text.out, HasSubstr("committed   resident"));
  // The first row is the leak whose pages are in RAM: 8 MiB of map_every4th.
  // (The rank column is as wide as the most rows' rank.)
  size_t first = text.out.find("\n  1 ");
  if (first == std::string::npos) first = text.out.find("\n   1 ");
  ASSERT_NE(first, std::string::npos) << text.out;
  EXPECT_THAT(text.out.substr(first, 120), HasSubstr("8.0 MiB"));
  EXPECT_THAT(text.out.substr(first, 120), HasSubstr("map_every4th"));
}

TEST(ResidencyOutputsTest, GrowthQueryAndPprofSayTheSameBytes) {
  const Pause p = FindPause();
  ASSERT_FALSE(p.at.empty());
  const TouchedRegion& every4th = p.regions[0];
  ASSERT_EQ(every4th.name, "every4th");
  const Json g = RunJson(absl::StrCat("growth --json -i ", TracePath("residency.data"), " --pid ", p.pid,
                                      " --to ", p.at));
  ASSERT_FALSE(g["total"]["to_rss"].is_null());
  const Json& top = g["stacks"][0];
  EXPECT_EQ(FirstAppFunction(top["commit"]), "map_every4th");
  EXPECT_EQ(top["to_rss"], every4th.touched * kPage);

  // Every 4th page of the first half was written and kept; the second half
  // was released (MADV_DONTNEED).
  const uint64_t written = every4th.start, released = every4th.start + (every4th.end - every4th.start) / 2;
  const Json q = RunJson(absl::StrCat("query --json", Args(p), " 0x", absl::Hex(written), " 0x",
                                      absl::Hex(written + kPage), " 0x", absl::Hex(released)));
  ASSERT_EQ(q.size(), 3u);
  EXPECT_EQ(q[0]["resident"]["state"], "resident");
  EXPECT_EQ(q[1]["resident"]["state"], "not resident");
  EXPECT_EQ(q[2]["resident"]["state"], "not resident");
  EXPECT_EQ(q[0]["resident"]["region_rss"], every4th.touched * kPage);

  TempDir dir;
  const std::string pb = dir.path() + "/m.pb.gz";
  CliRun pprof = Pageblame("maps --format pprof -o " + pb + Args(p));
  ASSERT_EQ(pprof.exit_code, 0) << pprof.err;
  CliRun strings = Shell("gzip -dc " + pb + " | strings");
  EXPECT_THAT(strings.out, HasSubstr("resident_space"));
}

// Two moments each just after a snapshot: both ends known, and per stack the
// growth is the difference; a moment between snapshots takes the earlier
// one and says how old it is.
TEST(ResidencyOutputsTest, GrowthBetweenTwoSnapshotsAndAMomentBetweenThem) {
  const Pause p = FindPause();
  ASSERT_FALSE(p.at.empty());
  auto file = residency::ReadSnapshotFile(TracePath("residency.data.rss"));
  ASSERT_TRUE(file.ok()) << file.status();
  std::vector<uint64_t> times;
  for (const residency::ResidencySnapshot& s : file->snapshots) {
    if (s.pid == p.pid) times.push_back(s.time);
  }
  ASSERT_GE(times.size(), 3u);
  auto spelled = [](uint64_t ns) { return absl::StrFormat("%.6f", (ns / 1000 + 1) / 1e6); };
  const Json g = RunJson(absl::StrCat("growth --json -i ", TracePath("residency.data"), " --pid ", p.pid,
                                      " --from ", spelled(times[0]), " --to end"));
  ASSERT_FALSE(g["total"]["from_rss"].is_null());
  ASSERT_FALSE(g["total"]["to_rss"].is_null());
  EXPECT_EQ(g["total"]["growth_rss"].get<int64_t>(),
            g["total"]["to_rss"].get<int64_t>() - g["total"]["from_rss"].get<int64_t>());
  bool every4th_seen = false;
  for (const Json& s : g["stacks"]) {
    if (s["from_rss"].is_null() || s["to_rss"].is_null()) {
      EXPECT_TRUE(s["growth_rss"].is_null());
      continue;
    }
    EXPECT_EQ(s["growth_rss"].get<int64_t>(), s["to_rss"].get<int64_t>() - s["from_rss"].get<int64_t>());
    if (FirstAppFunction(s["commit"]) == "map_every4th") {
      every4th_seen = true;
      EXPECT_EQ(s["to_rss"], p.regions[0].touched * kPage);  // still whole at the exit snapshot
    }
  }
  EXPECT_TRUE(every4th_seen);

  // Between the second and third snapshots: the second speaks, 0.1 s old.
  const uint64_t between = (times[1] + times[2]) / 2;
  const Json a = RunJson(absl::StrCat("attribute --json --regions ", Smaps(p), " -i ", TracePath("residency.data"),
                                      " --pid ", p.pid, " --at ", spelled(between)));
  EXPECT_EQ(a["rss_snapshot_time"], std::floor(times[1] / 1000) / 1e6);
  CliRun text = Pageblame(absl::StrCat("maps -i ", TracePath("residency.data"), " --pid ", p.pid, " --at ",
                                       spelled(between)));
  EXPECT_THAT(text.out, HasSubstr(" s before the moment asked"));
}

// Issue 41: with snapshots at both ends growth's resident growth is known
// for every stack and every method with committed bytes, a stack with
// nothing at the start growing by all it has at the end (only PROT_NONE
// bytes, which no snapshot reads, stay unknown); a method's is its stacks'
// sum, and the methods rank by it.
TEST(ResidencyOutputsTest, GrowthsResidentGrowthIsKnownPerMethodWhereBothEndsAre) {
  const Pause p = FindPause();
  ASSERT_FALSE(p.at.empty());
  auto file = residency::ReadSnapshotFile(TracePath("residency.data.rss"));
  ASSERT_TRUE(file.ok()) << file.status();
  uint64_t first = 0;
  for (const residency::ResidencySnapshot& s : file->snapshots) {
    if (s.pid == p.pid && first == 0) first = s.time;
  }
  ASSERT_NE(first, 0u);
  const std::string after_first = absl::StrFormat("%.6f", (first / 1000 + 1) / 1e6);
  // From the trace's start (nothing mapped yet) and from just after the
  // first snapshot, to the end.
  for (const std::string& from : {std::string(), " --from " + after_first}) {
    SCOPED_TRACE(from);
    const Json g = RunJson(absl::StrCat("growth --json -i ", TracePath("residency.data"), " --pid ", p.pid, from));
    ASSERT_FALSE(g["stacks"].empty());
    // Only PROT_NONE bytes at an end: no snapshot read them.
    auto reserved_only = [](const Json& s, const char* end) {
      return s[absl::StrCat(end, "_committed_bytes")] == 0 && s[absl::StrCat(end, "_bytes")] != 0;
    };
    size_t known = 0;
    for (const Json& s : g["stacks"]) {
      if (reserved_only(s, "from") || reserved_only(s, "to")) continue;
      ASSERT_FALSE(s["from_rss"].is_null() || s["to_rss"].is_null() || s["growth_rss"].is_null()) << s.dump();
      EXPECT_EQ(s["growth_rss"].get<int64_t>(), s["to_rss"].get<int64_t>() - s["from_rss"].get<int64_t>());
      if (from.empty()) {
        EXPECT_EQ(s["from_rss"], 0) << "nothing at the start: " << s.dump();
      }
      ++known;
    }
    EXPECT_GT(known, 5u);
    ASSERT_FALSE(g["methods"].empty());
    int64_t previous = INT64_MAX;
    auto rss = [](const Json& v) { return v.is_null() ? int64_t{0} : v.get<int64_t>(); };
    for (const Json& m : g["methods"]) {
      if (reserved_only(m, "from") || reserved_only(m, "to")) continue;
      int64_t from_rss = 0, to_rss = 0;
      for (const Json& i : m["stacks"]) {
        from_rss += rss(g["stacks"][i.get<size_t>()]["from_rss"]);
        to_rss += rss(g["stacks"][i.get<size_t>()]["to_rss"]);
      }
      ASSERT_FALSE(m["growth_rss"].is_null()) << m.dump();
      EXPECT_EQ(m["from_rss"].get<int64_t>(), from_rss) << m["method"];
      EXPECT_EQ(m["to_rss"].get<int64_t>(), to_rss) << m["method"];
      EXPECT_EQ(m["growth_rss"].get<int64_t>(), to_rss - from_rss) << m["method"];
      EXPECT_LE(m["growth_rss"].get<int64_t>(), previous) << "ranked by resident growth: " << m["method"];
      previous = m["growth_rss"].get<int64_t>();
    }
    // The text's rows say it: no '?' in the table.
    CliRun text = Pageblame(absl::StrCat("growth -i ", TracePath("residency.data"), " --pid ", p.pid, from));
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_THAT(text.out, HasSubstr("the application's methods by resident growth:"));
    const size_t table = text.out.find("by resident growth:");
    EXPECT_EQ(text.out.find(" ? ", table), std::string::npos) << text.out;
  }
}

// Issue 44: growth over both processes of the recording at a moment when
// one has had a snapshot and the other not yet. The total's resident bytes
// were the first's alone ("? -> 16.6 MiB"); they are unknown: '?' in text,
// null in JSON, and a note names the process without a snapshot.
TEST(ResidencyOutputsTest, GrowthOverProcessesOneWithoutASnapshotIsUnknownNotASum) {
  auto file = residency::ReadSnapshotFile(TracePath("residency.data.rss"));
  ASSERT_TRUE(file.ok()) << file.status();
  std::map<uint32_t, uint64_t> first;  // pid -> its first snapshot
  for (const residency::ResidencySnapshot& s : file->snapshots) first.try_emplace(s.pid, s.time);
  ASSERT_EQ(first.size(), 2u);
  auto [with, without] = std::minmax_element(first.begin(), first.end(),
                                             [](const auto& a, const auto& b) { return a.second < b.second; });
  ASSERT_LT(with->second + 2000000, without->second) << "two snapshots 2 ms apart or more";
  // 1 ms after the first process's first snapshot, before the other's.
  const std::string at = absl::StrFormat("%.6f", (with->second / 1000 + 1000) / 1e6);
  const std::string trace = TracePath("residency.data");
  // Alone, the first process's resident bytes are known at that moment...
  const Json alone = RunJson(absl::StrCat("growth --json -i ", trace, " --pid ", with->first, " --to ", at));
  ASSERT_FALSE(alone["total"]["to_rss"].is_null());
  EXPECT_EQ(alone["notes"], Json::array());
  // ...and the other process has bytes then, so their sum is not known.
  const Json other = RunJson(absl::StrCat("growth --json -i ", trace, " --pid ", without->first, " --to ", at));
  ASSERT_GT(other["total"]["to_committed_bytes"].get<uint64_t>(), 0u);
  EXPECT_TRUE(other["total"]["to_rss"].is_null());
  const Json both = RunJson(absl::StrCat("growth --json -i ", trace, " --to ", at));
  EXPECT_TRUE(both["total"]["to_rss"].is_null());
  EXPECT_TRUE(both["total"]["growth_rss"].is_null());
  ASSERT_EQ(both["notes"].size(), 1u);
  EXPECT_THAT(both["notes"][0].get<std::string>(),
              HasSubstr(absl::StrCat("no residency snapshot of pid ", without->first, " (residency)")));
  // Each stack has bytes in both processes (the second is a fork of the
  // first): none may claim the first process's resident bytes as its own.
  for (const Json& s : both["stacks"]) {
    if (s["to_bytes"].get<uint64_t>() > 0) {
      EXPECT_TRUE(s["to_rss"].is_null()) << s.dump();
    }
  }
  CliRun text = Pageblame(absl::StrCat("growth -i ", trace, " --to ", at));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  // At the trace's start nothing is mapped: 0 resident bytes, known
  // without a snapshot; at --to the sum is unknown, and the note says whose.
  EXPECT_THAT(text.out, HasSubstr(", resident 0 B -> ?\n"));
  EXPECT_THAT(text.out, HasSubstr(absl::StrCat("note: resident bytes at --to ", at, " unknown: no residency snapshot of pid ",
                                               without->first, " (residency)")));
}

TEST(ResidencyOutputsTest, TracesWithoutOrWithBrokenSnapshotsSaySo) {
  TempDir dir;
  const std::string trace = dir.path() + "/t.data";
  std::filesystem::copy_file(TracePath("residency.data"), trace);
  // No TRACE.rss: rss null, no resident column, exit 0; --sort rss: exit 1.
  const Json none = RunJson("maps --json -i " + trace);
  ASSERT_FALSE(none.empty());
  EXPECT_TRUE(none[0]["rss"].is_null());
  CliRun sort = Pageblame("growth --sort rss -i " + trace);
  EXPECT_EQ(sort.exit_code, 1);
  EXPECT_THAT(sort.err, HasSubstr("t.data.rss does not exist"));
  // A truncated TRACE.rss beside it: a warning, the answer without rss.
  std::ifstream in(TracePath("residency.data.rss"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::ofstream(trace + ".rss", std::ios::binary) << bytes.substr(0, bytes.size() - 5);
  CliRun cut = Pageblame("maps --json -i " + trace);
  EXPECT_EQ(cut.exit_code, 0);
  EXPECT_THAT(cut.err, HasSubstr("truncated"));
  EXPECT_THAT(cut.err, HasSubstr("resident bytes are left out"));
  // Named with --rss, the same file is an error.
  CliRun named = Pageblame("maps -i " + trace + " --rss " + trace + ".rss");
  EXPECT_EQ(named.exit_code, 1);
  EXPECT_THAT(named.err, HasSubstr("truncated"));
  // Snapshots of another trace: its pids and clock do not match.
  CliRun other = Pageblame("maps -i " + TracePath("phases-fp.data") + " --rss " + TracePath("residency.data.rss"));
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_THAT(other.err, HasSubstr("residency snapshots of another trace"));
  CliRun both = Pageblame("maps --no-rss --rss x -i " + trace);
  EXPECT_EQ(both.exit_code, 2);
}

}  // namespace
}  // namespace pageblame::testing

// `pageblame report` opened in a real browser: headless Chromium loads the
// page from disk with no network (the flags below), the page's own check
// (#selftest) writes what it drew into the DOM, and --dump-dom hands it back.
// On a real trace: no console errors, the flame graph shows the top stack's
// leaf function, the time chart ends at `maps`' total, the address strip has
// one element per region, and the growth table adds up as `growth` does.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/residency/snapshot_file.h"
#include "tests/cli_runner.h"
#include "tests/tool_runner.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kChromium[] = "/usr/bin/chromium";

const ManifestRow& Row(const std::string& trace, const std::string& role) {
  static std::map<std::string, ManifestRow> rows;
  const std::string key = trace + "/" + role;
  if (!rows.count(key)) {
    for (const ManifestRow& r : ReadManifest()) {
      if (r["trace"] == trace && r["role"] == role) rows[key] = r;
    }
  }
  EXPECT_TRUE(rows.count(key)) << key;
  return rows[key];
}

std::string TraceArgs(const ManifestRow& row) {
  return "-i " + TracePath(row["trace"]) + " --buildid-dir " + SourceDir() + "/traces/buildid-cache --pid " +
         row["pid"];
}

// Chromium, headless, offline: no sandbox (tests run as root), no GPU, no
// first-run, background networking, component updates or sync (there is
// no network), a fresh profile. --dump-dom prints the DOM once the page has
// loaded (its script draws synchronously); --virtual-time-budget lets it
// finish whatever it scheduled; two minutes at most.
struct Browsed {
  std::string dom, log;
  Json selftest;
};
Browsed Browse(const std::string& page, const std::string& hash = "selftest") {
  const std::string profile = ScratchPath("chromium-profile");
  // timeout: a page that Chromium cannot finish is a failure (124), not a hang.
  CliRun r = Shell(absl::StrCat(
      "timeout 120 ", kChromium, " --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking",
      " --disable-component-update --disable-sync --user-data-dir=", profile,
      " --enable-logging=stderr --v=0 --virtual-time-budget=10000 --window-size=1280,900",
      " --dump-dom 'file://", page, "#", hash, "'"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Browsed b{r.out, r.err, Json()};
  std::smatch m;
  if (std::regex_search(b.dom, m, std::regex("<pre id=\"selftest-result\">([^<]*)</pre>"))) {
    const std::string text = absl::StrReplaceAll(m[1].str(), {{"&quot;", "\""}, {"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}});
    b.selftest = Json::parse(text, nullptr, false);
  }
  EXPECT_TRUE(b.selftest.is_object()) << "no self-test result in the page; browser log:\n" << b.log;
  return b;
}

// Console errors and uncaught exceptions, as Chromium logs them.
void ExpectNoPageErrors(const Browsed& b) {
  EXPECT_EQ(b.selftest["errors"], Json::array()) << b.selftest["errors"].dump();
  EXPECT_THAT(b.log, ::testing::Not(HasSubstr("Uncaught")));
  EXPECT_FALSE(std::regex_search(b.log, std::regex(":(ERROR|WARNING):CONSOLE"))) << b.log;
}

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(ReportBrowserTest, PhasesPageShowsWhatMapsAndGrowthSay) {
  PB_REQUIRE_TOOL(kChromium);
  const ManifestRow& row = Row("phases-fp.data", "main");
  const std::string page = ScratchPath("phases.html");
  CliRun r = Pageblame("report " + TraceArgs(row) + " -o " + page);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  struct stat st;
  ASSERT_EQ(stat(page.c_str(), &st), 0);
  EXPECT_LT(st.st_size, 5 << 20);

  const Browsed b = Browse(page);
  ExpectNoPageErrors(b);

  // maps: its total and its regions.
  CliRun maps = Pageblame("maps --json " + TraceArgs(row));
  ASSERT_EQ(maps.exit_code, 0);
  const Json regions = Json::parse(maps.out);
  uint64_t total = 0;
  std::map<std::string, uint64_t> by_stack;  // leaf-first symbols -> bytes
  std::map<std::string, std::string> leaf_of;
  for (const Json& reg : regions) {
    const uint64_t size = std::stoull(reg["end"].get<std::string>(), nullptr, 16) -
                          std::stoull(reg["start"].get<std::string>(), nullptr, 16);
    total += size;
    if (reg["origin"].is_null()) continue;
    const std::string key = reg["origin"]["stack"].dump();
    by_stack[key] += size;
    const Json& leaf = reg["origin"]["stack"][0]["symbol"];
    leaf_of[key] = leaf.is_null() ? "" : leaf.get<std::string>();
  }
  EXPECT_EQ(b.selftest["final_mapped"].get<uint64_t>(), total);
  EXPECT_EQ(b.selftest["regions"].get<size_t>(), regions.size());
  EXPECT_EQ(Count(b.dom, "class=\"region"), regions.size());

  auto top = std::max_element(by_stack.begin(), by_stack.end(),
                              [](const auto& a, const auto& c) { return a.second < c.second; });
  ASSERT_NE(top, by_stack.end());
  EXPECT_EQ(leaf_of[top->first], "grow_cache");
  EXPECT_THAT(b.selftest["flame_names"].get<std::vector<std::string>>(), ::testing::Contains("grow_cache"));
  EXPECT_THAT(b.dom, HasSubstr("data-name=\"grow_cache\""));

  // The growth table over the whole trace is `growth` from start to end,
  // in committed bytes, credited as the page credits (the creating call).
  CliRun g = Pageblame("growth --json --by create --sort committed " + TraceArgs(row));
  ASSERT_EQ(g.exit_code, 0);
  const Json growth = Json::parse(g.out);
  EXPECT_EQ(b.selftest["growth_from"], growth["total"]["from_committed_bytes"]);
  EXPECT_EQ(b.selftest["growth_to"], growth["total"]["to_committed_bytes"]);
  EXPECT_EQ(b.selftest["growth_rows"][0]["leaf"], "grow_cache");
  // Issue 41: a row per application method, each `growth`'s row of that
  // method (the sums of its stacks), named whole.
  size_t rows = 0;
  bool grouped = false;
  for (const Json& row : b.selftest["growth_rows"]) {
    const std::string name = row["method"];
    if (name == "[other]" || name == "[before trace]") continue;
    const Json* method = nullptr;
    for (const Json& m : growth["methods"]) {
      const std::string said = (m["app_frame"].get<bool>() ? "" : "(no app frame) ") + m["method"].get<std::string>();
      if (name == said || absl::StartsWith(name, said + " -> ")) method = &m;
    }
    ASSERT_NE(method, nullptr) << name << " is no method of growth --json";
    EXPECT_EQ(row["growth"], (*method)["growth_committed_bytes"]) << name;
    EXPECT_EQ(row["mapped_growth"], (*method)["growth_bytes"]) << name;
    grouped |= (*method)["stacks"].size() > 1;
    ++rows;
  }
  EXPECT_GT(rows, 0u);
  EXPECT_LE(rows, growth["methods"].size());  // less: methods with nothing mapped at either end
  EXPECT_TRUE(grouped) << "no method of two stacks: the test would not see a wrong sum";
  EXPECT_EQ(b.selftest["attribution_rows"], 0) << "no region table given";
  // No snapshots beside this trace: a note, no resident chart, no shading.
  EXPECT_THAT(b.selftest["resident_note"].get<std::string>(), HasSubstr("no residency snapshots"));
  EXPECT_EQ(b.selftest["resident_points"], 0);
  EXPECT_EQ(b.selftest["strip_shaded"], 0);
}

TEST(ReportBrowserTest, WithARegionTableThePageAttributesIt) {
  PB_REQUIRE_TOOL(kChromium);
  const ManifestRow& row = Row("rules-record.data", "main");
  const std::string page = ScratchPath("rules.html");
  CliRun r = Pageblame("report " + TraceArgs(row) + " --regions " + TracePath(row["maps"]) + " -o " + page);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Browsed b = Browse(page);
  ExpectNoPageErrors(b);
  CliRun a = Pageblame("attribute --json " + TraceArgs(row) + " --regions " + TracePath(row["maps"]));
  ASSERT_EQ(a.exit_code, 0);
  const Json attribution = Json::parse(a.out);
  // A header row, one per method (attribute's first screen), and
  // [before trace] / [not mapped] rows; each method named whole.
  EXPECT_GE(b.selftest["attribution_rows"].get<size_t>(), attribution["methods"].size() + 1);
  const std::vector<std::string> named = b.selftest["attribution_methods"];
  ASSERT_EQ(named.size(), attribution["methods"].size());
  for (const std::string& n : named) {
    bool found = false;
    for (const Json& m : attribution["methods"]) {
      const std::string said = (m["app_frame"].get<bool>() ? "" : "(no app frame) ") + m["method"].get<std::string>();
      found |= n == said || absl::StartsWith(n, said + " -> ");
    }
    EXPECT_TRUE(found) << n << " is no method of attribute --json";
  }
  EXPECT_THAT(b.dom, HasSubstr("do_map_fixed_over"));
  // Ranked and shown by committed bytes, as attribute ranks them: row by
  // row the same figures (the 80 MiB reservation is no row's committed).
  const std::vector<uint64_t> committed = b.selftest["attribution_committed"];
  ASSERT_EQ(committed.size(), attribution["methods"].size());
  for (size_t i = 0; i < committed.size(); ++i) {
    EXPECT_EQ(committed[i], attribution["methods"][i]["committed_bytes"].get<uint64_t>()) << "row " << i;
  }
  // No heap snapshots beside this trace: no in-use or free column (not zeros).
  EXPECT_TRUE(attribution["heap_snapshot_time"].is_null());
  EXPECT_THAT(b.selftest["attribution_columns"].get<std::vector<std::string>>(),
              ::testing::Not(::testing::Contains("in use")));
  EXPECT_EQ(b.selftest["attribution_in_use"], Json::array());
  EXPECT_EQ(b.selftest["attribution_free"], Json::array());
}

// traces/arena-mix.data: arena_mix.c recorded by `pageblame record` with
// heap snapshots (TRACE.heap); its maps at the pause are the region table.
// The pid is the one its pause maps are named by.
std::string ArenaMixPid() {
  for (const auto& e : std::filesystem::directory_iterator(TracePath("maps"))) {
    const std::string n = e.path().filename();
    if (absl::StartsWith(n, "arena-mix.") && absl::EndsWith(n, ".pause.maps")) return n.substr(10, n.size() - 21);
  }
  return "";
}

// Issue 39: inside malloc's arenas the page splits each method's bytes into
// in use and free held by glibc, row by row the figures of `attribute
// --json` (credited and ranked as the page does: the creating call,
// committed bytes); a method
// whose arena bytes are under a tenth in use reads "freed; held by glibc";
// arena rows are marked and a note says the committing stack is not every
// chunk's owner; the strip's arena regions say the split `maps --json`
// gives them.
TEST(ReportBrowserTest, InsideMallocArenasThePageSplitsAsAttributeDoes) {
  PB_REQUIRE_TOOL(kChromium);
  const std::string pid = ArenaMixPid();
  ASSERT_FALSE(pid.empty()) << "no traces/maps/arena-mix.PID.pause.maps";
  const std::string args = "-i " + TracePath("arena-mix.data") + " --buildid-dir " + SourceDir() +
                           "/traces/buildid-cache --pid " + pid;
  const std::string table = " --regions " + TracePath("maps/arena-mix." + pid + ".pause.maps");
  const std::string page = ScratchPath("arena-mix.html");
  CliRun r = Pageblame("report " + args + table + " -o " + page);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Browsed b = Browse(page);
  ExpectNoPageErrors(b);
  // Credited and ranked as the page does: the creating call, committed bytes.
  CliRun a = Pageblame("attribute --json --by create --sort committed " + args + table);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const Json attribution = Json::parse(a.out);
  ASSERT_FALSE(attribution["heap_snapshot_time"].is_null()) << "the trace's heap snapshots were not read";
  EXPECT_THAT(b.selftest["attribution_columns"].get<std::vector<std::string>>(), ::testing::Contains("in use"));
  const Json& methods = attribution["methods"];
  const Json& in_use = b.selftest["attribution_in_use"];
  const Json& free = b.selftest["attribution_free"];
  const Json& kinds = b.selftest["attribution_kinds"];
  ASSERT_EQ(in_use.size(), methods.size());
  ASSERT_EQ(free.size(), methods.size());
  ASSERT_EQ(kinds.size(), methods.size());
  size_t arena = 0, held = 0, used = 0;
  for (size_t i = 0; i < methods.size(); ++i) {
    const Json& m = methods[i];
    EXPECT_EQ(b.selftest["attribution_committed"][i], m["committed_bytes"]) << "row " << i;
    if (!m.contains("in_use_bytes")) {  // not an arena kind: empty cells, no mark
      EXPECT_EQ(in_use[i]["text"], "") << "row " << i;
      EXPECT_TRUE(in_use[i]["bytes"].is_null()) << "row " << i;
      EXPECT_EQ(free[i]["text"], "") << "row " << i;
      EXPECT_EQ(kinds[i], m["kind"].is_null() ? "" : m["kind"].get<std::string>()) << "row " << i;
      continue;
    }
    ++arena;
    EXPECT_EQ(kinds[i], m["kind"].get<std::string>() + "*") << "row " << i;
    ASSERT_FALSE(m["in_use_bytes"].is_null()) << "row " << i;
    EXPECT_EQ(in_use[i]["bytes"], m["in_use_bytes"]) << "row " << i;
    EXPECT_EQ(free[i]["bytes"], m["free_bytes"]) << "row " << i;
    const uint64_t u = m["in_use_bytes"], f = m["free_bytes"];
    if (u * 10 < u + f) {
      EXPECT_EQ(in_use[i]["text"], "freed; held by glibc") << "row " << i;
      ++held;
    } else {
      EXPECT_THAT(in_use[i]["text"].get<std::string>(), ::testing::MatchesRegex("[0-9.]+ (B|KiB|MiB|GiB)"))
          << "row " << i;
      ++used;
    }
  }
  EXPECT_GT(arena, 0u);
  EXPECT_GT(held, 0u) << "no arena row freed; held by glibc: churn_8m frees every block it allocates";
  EXPECT_GT(used, 0u) << "no arena row in use: keep_small and keep_64k keep theirs";
  EXPECT_THAT(b.selftest["arena_note"].get<std::string>(), HasSubstr("without a syscall"));
  EXPECT_THAT(b.selftest["arena_note"].get<std::string>(), HasSubstr("docs/heap.md"));

  // The strip: every arena region's split is maps --json's, said on hover.
  CliRun maps = Pageblame("maps --json " + args);
  ASSERT_EQ(maps.exit_code, 0) << maps.err;
  std::map<std::string, Json> by_start;
  for (const Json& reg : Json::parse(maps.out)) by_start[reg["start"]] = reg;
  size_t tips = 0;
  for (const Json& t : b.selftest["strip_arena_tips"]) {
    ASSERT_TRUE(by_start.count(t["start"])) << t.dump();
    const Json& reg = by_start[t["start"]];
    EXPECT_EQ(t["in_use"], reg["in_use_bytes"]) << t.dump();
    EXPECT_EQ(t["free"], reg["free_bytes"]) << t.dump();
    EXPECT_THAT(t["line"].get<std::string>(), HasSubstr("free held by glibc")) << t.dump();
    ++tips;
  }
  size_t arena_regions = 0;
  for (const auto& [start, reg] : by_start) arena_regions += reg.contains("in_use_bytes");
  EXPECT_EQ(tips, arena_regions);
  EXPECT_GT(tips, 0u);
}


// Bytes of the regions of `maps --json` that are not PROT_NONE.
uint64_t CommittedOf(const Json& maps) {
  uint64_t sum = 0;
  for (const Json& r : maps) {
    if (r["prot"] == "---") continue;
    sum += std::stoull(r["end"].get<std::string>(), nullptr, 16) - std::stoull(r["start"].get<std::string>(), nullptr, 16);
  }
  return sum;
}

// Issue 31: a .NET app's chart is its committed bytes (hundreds of MiB),
// not the GC's 48 GiB PROT_NONE reservation, unless the user asks for the
// reservations; the legend names the leaking C# method.
TEST(ReportBrowserTest, DotnetChartDrawsCommittedBytesAndNamesTheAppFrames) {
  PB_REQUIRE_TOOL(kChromium);
  const std::string args = "-i " + TracePath("dotnet/dotnet-leak.data") + " --pid " + DotnetPid();
  const std::string page = ScratchPath("dotnet.html");
  CliRun r = Pageblame("report " + args + " -o " + page);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Browsed b = Browse(page);
  ExpectNoPageErrors(b);
  CliRun maps = Pageblame("maps --json " + args);
  ASSERT_EQ(maps.exit_code, 0);
  const uint64_t committed_end = CommittedOf(Json::parse(maps.out));
  // The committed peak, as growth finds it (--by commit: --from peak is the
  // moment with the most bytes committed).
  CliRun g = Pageblame("growth --json --by commit --from peak " + args);
  ASSERT_EQ(g.exit_code, 0) << g.err;
  const uint64_t committed_peak = Json::parse(g.out)["total"]["from_committed_bytes"].get<uint64_t>();
  EXPECT_EQ(b.selftest["drawn"], "committed");
  const uint64_t drawn_max = b.selftest["drawn_max"].get<uint64_t>();
  // The page samples 400 boundaries: its highest is at most the peak, at
  // least the end.
  EXPECT_LE(drawn_max, committed_peak);
  EXPECT_GE(drawn_max, committed_end);
  EXPECT_LT(drawn_max, uint64_t{1} << 30);
  EXPECT_EQ(b.selftest["final_committed"].get<uint64_t>(), committed_end);
  bool leak = false;
  for (const Json& e : b.selftest["legend"]) leak |= absl::StrContains(e.get<std::string>(), "Program::LeakNativeMemory");
  EXPECT_TRUE(leak) << b.selftest["legend"].dump();
  // Issue 41: an entry per method, never two for one.
  const std::vector<std::string> legend = b.selftest["legend"];
  EXPECT_EQ(std::set<std::string>(legend.begin(), legend.end()).size(), legend.size()) << b.selftest["legend"].dump();
  EXPECT_THAT(b.selftest["resident_note"].get<std::string>(), HasSubstr("no residency snapshots"));

  // Ticked (#reserved), the reservations come on top: the whole mapped total.
  const Browsed reserved = Browse(page, "selftest&reserved");
  ExpectNoPageErrors(reserved);
  EXPECT_EQ(reserved.selftest["drawn"], "mapped");
  EXPECT_GT(reserved.selftest["drawn_max"].get<uint64_t>(), uint64_t{40} << 30);
}

// Issue 28: with residency snapshots, resident bytes at each snapshot (the
// last equals `maps --json`'s rss summed at that snapshot) and a shaded strip.
TEST(ReportBrowserTest, ResidencyPageDrawsResidentBytesOfTheSnapshots) {
  PB_REQUIRE_TOOL(kChromium);
  std::string pid;
  for (const auto& e : std::filesystem::directory_iterator(TracePath("truth"))) {
    const std::string n = e.path().filename();
    if (absl::StartsWith(n, "residency.") && absl::EndsWith(n, ".regions.tsv")) pid = n.substr(10, n.size() - 22);
  }
  ASSERT_FALSE(pid.empty());
  const std::string args = "-i " + TracePath("residency.data") + " --pid " + pid;
  const std::string page = ScratchPath("residency.html");
  CliRun r = Pageblame("report " + args + " -o " + page);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Browsed b = Browse(page);
  ExpectNoPageErrors(b);
  // The process's last snapshot, and maps at it (--at end past the trace).
  auto file = residency::ReadSnapshotFile(TracePath("residency.data.rss"));
  ASSERT_TRUE(file.ok()) << file.status();
  uint64_t last = 0;
  for (const residency::ResidencySnapshot& s : file->snapshots) {
    if (std::to_string(s.pid) == pid) last = std::max(last, s.time);
  }
  ASSERT_GT(last, 0u);
  CliRun end = Pageblame("maps --json " + args);
  ASSERT_EQ(end.exit_code, 0);
  CliRun at = Pageblame(absl::StrFormat("maps --json %s --at %.6f", args, (last / 1000 + 1) / 1e6));
  const Json maps = Json::parse(at.exit_code == 0 ? at.out : end.out);  // past the trace's end: the end
  uint64_t rss = 0;
  for (const Json& reg : maps) rss += reg["rss"].is_null() ? 0 : reg["rss"].get<uint64_t>();
  ASSERT_GT(rss, 0u);
  EXPECT_EQ(b.selftest["resident_last"].get<uint64_t>(), rss);
  EXPECT_GE(b.selftest["resident_points"].get<size_t>(), 2u);
  EXPECT_GT(b.selftest["strip_shaded"].get<size_t>(), 10u);
  EXPECT_THAT(b.dom, HasSubstr("id=\"resident-chart\"><svg"));
}

// Issue 44: one symbol name of 1 MiB (a JIT's perf map may name a range
// anything) made the page tens of MB and Chromium take minutes laying the
// name out in wrapping cells. node-trace.data's one JIT frame, named by
// perf-11358.map beside it, is here renamed so. The page holds the name
// once, draws it cut to a few hundred characters, and gives it whole on
// hover; Chromium finishes well within the test's timeout.
TEST(ReportBrowserTest, AMebibyteSymbolNameIsDrawnCutAndGivenWholeOnHover) {
  PB_REQUIRE_TOOL(kChromium);
  const std::string dir = ScratchPath("huge-name");
  std::filesystem::create_directories(dir);
  const std::string trace = dir + "/node-trace.data";
  std::filesystem::copy_file(TracePath("node-trace.data"), trace, std::filesystem::copy_options::overwrite_existing);
  std::ifstream in(TracePath("perf-11358.map"));
  std::string map((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string jit = "JS:^ /work/main/traces/src/jit.js:1:1";  // the frame its stacks reach
  const size_t at = map.find(jit);
  ASSERT_NE(at, std::string::npos);
  std::string huge = "JS:^huge_";
  while (huge.size() < (1u << 20)) huge += "abcdefghijklmnopqrstuvwxyz0123456789_";
  huge += "_end";
  map.replace(at, jit.size(), huge);
  std::ofstream(dir + "/perf-11358.map") << map;

  const std::string page = dir + "/page.html";
  CliRun r = Pageblame("report -i " + trace + " --pid 11358 -o " + page);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  struct stat st;
  ASSERT_EQ(stat(page.c_str(), &st), 0);
  EXPECT_LT(st.st_size, (1 << 20) + (1 << 19)) << "the name is in the page once";
  const Browsed b = Browse(page);
  ExpectNoPageErrors(b);
  EXPECT_EQ(b.selftest["longest_name"].get<size_t>(), huge.size());
  // Drawn cut: the start and end of the name around an ellipsis.
  EXPECT_LT(b.selftest["longest_label"].get<size_t>(), 1000u);
  EXPECT_THAT(b.dom, HasSubstr("JS:^huge_abcdefghij"));
  EXPECT_THAT(b.dom, HasSubstr("\u2026"));
  // Whole on hover: the flame box's title holds the name and its bytes.
  EXPECT_GT(b.selftest["longest_name_hover_title"].get<size_t>(), huge.size());
}

TEST(ReportCliTest, UsageAndOutputErrors) {
  const ManifestRow& row = Row("phases-fp.data", "main");
  CliRun r = Pageblame("report " + TraceArgs(row));
  ExpectOneLineError(r, "-o FILE");
  EXPECT_EQ(r.exit_code, 2);
  r = Pageblame("report " + TraceArgs(row) + " -o /nonexistent-dir/page.html");
  ExpectOneLineError(r, "/nonexistent-dir/page.html");
  EXPECT_EQ(r.exit_code, 1);
  r = Pageblame("report " + TraceArgs(row) + " --at 1.5 -o " + ScratchPath("x.html"));
  ExpectOneLineError(r, "outside the trace");
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace pageblame::testing

// `pageblame report` opened in a real browser: headless Chromium loads the
// page from disk with no network (the flags below), the page's own check
// (#selftest) writes what it drew into the DOM, and --dump-dom hands it back.
// On a real trace: no console errors, the flame graph shows the top stack's
// leaf function, the time chart ends at `maps`' total, the address strip has
// one element per region, and the growth table adds up as `growth` does.
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
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
// finish whatever it scheduled.
struct Browsed {
  std::string dom, log;
  Json selftest;
};
Browsed Browse(const std::string& page) {
  const std::string profile = ScratchPath("chromium-profile");
  CliRun r = Shell(absl::StrCat(
      kChromium, " --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking",
      " --disable-component-update --disable-sync --user-data-dir=", profile,
      " --enable-logging=stderr --v=0 --virtual-time-budget=10000 --window-size=1280,900",
      " --dump-dom 'file://", page, "#selftest'"));
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

  // The growth table over the whole trace is `growth` from start to end.
  CliRun g = Pageblame("growth --json " + TraceArgs(row));
  ASSERT_EQ(g.exit_code, 0);
  const Json growth = Json::parse(g.out);
  EXPECT_EQ(b.selftest["growth_from"], growth["total"]["from_bytes"]);
  EXPECT_EQ(b.selftest["growth_to"], growth["total"]["to_bytes"]);
  EXPECT_EQ(b.selftest["growth_rows"][0]["leaf"], "grow_cache");
  EXPECT_EQ(b.selftest["growth_rows"][0]["growth"], growth["stacks"][0]["growth_bytes"]);
  EXPECT_EQ(b.selftest["attribution_rows"], 0) << "no region table given";
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
  // A header row, one per stack, and [before trace] / [not mapped] rows.
  EXPECT_GE(b.selftest["attribution_rows"].get<size_t>(), attribution["stacks"].size() + 1);
  EXPECT_THAT(b.dom, HasSubstr("do_map_fixed_over"));
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

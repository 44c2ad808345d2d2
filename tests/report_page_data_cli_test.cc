// The data `pageblame report` embeds in its page (report_data.h), read back
// from the written file without a browser, against what the other commands
// say of the same trace:
//   - the .NET recording: the series are ranked by committed bytes (the
//     GC's PROT_NONE reservation, tens of GiB mapped, takes no colour), and
//     a top series is named by the leaking C# method;
//   - the residency recording: one resident point per snapshot of the
//     process, each the sum of `maps --json --at` that snapshot's rss; the
//     strip's rss per region is maps' at the end;
//   - a trace without snapshots: no resident series.
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "processor/residency/snapshot_file.h"
#include "tests/cli_runner.h"
#include "tests/residency_fixtures.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

using Json = nlohmann::json;


// The residency program's pid (traces/truth/residency.PID.regions.tsv).
std::string ResidencyPid() {
  for (const auto& e : std::filesystem::directory_iterator(TracePath("truth"))) {
    const std::string n = e.path().filename();
    if (absl::StartsWith(n, "residency.") && absl::EndsWith(n, ".regions.tsv")) {
      return n.substr(10, n.size() - 10 - 12);
    }
  }
  return "";
}

// Writes the page and returns the JSON inside its data element.
Json PageData(const std::string& args, const std::string& name) {
  const std::string page = ScratchPath(name);
  CliRun r = Pageblame("report " + args + " -o " + page);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::ifstream f(page);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string html = ss.str();
  const std::string open = "<script type=\"application/json\" id=\"pageblame-data\">";
  const size_t from = html.find(open);
  const size_t to = html.find("</script>", from);
  if (from == std::string::npos || to == std::string::npos) {
    ADD_FAILURE() << "no data element in " << page;
    return Json();
  }
  return Json::parse(html.substr(from + open.size(), to - from - open.size()));
}

Json RunJson(const std::string& args) {
  CliRun r = Pageblame(args);
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
  return r.exit_code == 0 ? Json::parse(r.out) : Json();
}

uint64_t Max(const Json& a) {
  uint64_t m = 0;
  for (const Json& v : a) m = std::max(m, v.get<uint64_t>());
  return m;
}

// The series' values at every boundary (the page's dense()).
std::vector<int64_t> Dense(const Json& sparse, size_t n) {
  std::vector<int64_t> out(n, 0);
  int64_t v = 0;
  size_t j = 0;
  for (size_t k = 0; k < n; ++k) {
    while (j + 1 < sparse.size() && sparse[j].get<size_t>() == k) {
      v = sparse[j + 1].get<int64_t>();
      j += 2;
    }
    out[k] = v;
  }
  return out;
}

TEST(ReportPageDataTest, DotnetSeriesAreRankedByCommittedBytesAndNamedByAppFrames) {
  const std::string pid = DotnetPid();
  ASSERT_FALSE(pid.empty());
  const Json d = PageData("-i " + TracePath("dotnet/dotnet-leak.data") + " --pid " + pid, "dotnet.html");
  const Json& tl = d["timeline"];
  const uint64_t mapped_peak = Max(tl["mapped"]), committed_peak = Max(tl["committed"]);
  // The GC's reservation: tens of GiB mapped, well under 1 GiB committed.
  EXPECT_GT(mapped_peak, uint64_t{40} << 30);
  EXPECT_LT(committed_peak, uint64_t{1} << 30);
  // The committed bytes at the end are what maps says is not PROT_NONE.
  uint64_t committed_end = 0;
  for (const Json& r : RunJson("maps --json -i " + TracePath("dotnet/dotnet-leak.data") + " --pid " + pid)) {
    if (r["prot"] != "---") {
      committed_end += std::stoull(r["end"].get<std::string>(), nullptr, 16) -
                       std::stoull(r["start"].get<std::string>(), nullptr, 16);
    }
  }
  EXPECT_EQ(tl["committed"].back().get<uint64_t>(), committed_end);
  // Series after [before trace] by their peak committed bytes, descending.
  const size_t n = tl["times"].size();
  uint64_t prev = UINT64_MAX;
  bool leak_named = false;
  for (size_t i = 1; i < tl["series"].size(); ++i) {
    const Json& s = tl["series"][i];
    std::vector<int64_t> c = Dense(s["committed"], n);
    const uint64_t peak = static_cast<uint64_t>(*std::max_element(c.begin(), c.end()));
    EXPECT_LE(peak, prev) << "series " << i;
    prev = peak;
    ASSERT_TRUE(s["kind"].is_string()) << s.dump();
    // The page colours (and names in its legend) the first twelve.
    if (i <= 12) {
      for (const Json& f : d["stacks"][s["stack"].get<size_t>()]["summary"]) {
        leak_named |= absl::StrContains(d["names"].at(f.get<size_t>()).get<std::string>(), "Program::LeakNativeMemory");
      }
    }
  }
  EXPECT_TRUE(leak_named) << "no top series names Program::LeakNativeMemory";
  EXPECT_TRUE(d["resident"].is_null());
  EXPECT_EQ(d["snapshots"], false);
}

TEST(ReportPageDataTest, ResidentBytesAtEachSnapshotAreMapsRss) {
  const std::string pid = ResidencyPid();
  ASSERT_FALSE(pid.empty());
  const std::string args = "-i " + TracePath("residency.data") + " --pid " + pid;
  const Json d = PageData(args, "residency.html");
  ASSERT_TRUE(d["resident"].is_object()) << d["resident"].dump();
  const Json& res = d["resident"];
  // One point per snapshot of the process, by time.
  auto file = residency::ReadSnapshotFile(TracePath("residency.data.rss"));
  ASSERT_TRUE(file.ok()) << file.status();
  std::vector<uint64_t> times;
  uint64_t requested = 0;  // the snapshot taken while the program waited
  for (const residency::ResidencySnapshot& s : file->snapshots) {
    if (std::to_string(s.pid) != pid) continue;
    times.push_back(s.time);
    if (s.reason == residency::SnapshotReason::kRequested) requested = s.time;
  }
  std::sort(times.begin(), times.end());
  ASSERT_GT(requested, 0u);
  ASSERT_GE(times.size(), 2u);
  ASSERT_EQ(res["times"].size(), times.size());
  ASSERT_EQ(res["total"].size(), times.size());
  const double trace_end = d["end"].get<double>();
  for (size_t k = 0; k < times.size(); ++k) {
    SCOPED_TRACE(absl::StrCat("snapshot ", k, " at ", times[k]));
    // perf script's microseconds, rounded up: this snapshot is the latest
    // at or before it; past the trace's last event, --at end.
    const double at = (times[k] / 1000 + 1) / 1e6;
    const std::string at_arg = at > trace_end ? "end" : absl::StrFormat("%.6f", at);
    uint64_t rss = 0;
    for (const Json& r : RunJson("maps --json " + args + " --at " + at_arg)) {
      if (!r["rss"].is_null()) rss += r["rss"].get<uint64_t>();
    }
    EXPECT_EQ(res["total"][k].get<uint64_t>(), rss);
    // The named series never hold more than the total.
    uint64_t named = 0;
    for (const Json& s : res["series"]) named += s["bytes"][k].get<uint64_t>();
    EXPECT_LE(named, rss);
  }
  // At the pause, map_every4th's series holds the pages the program says
  // it touched there (residency.c: every 4th page of 64 MiB).
  const size_t k = std::find(times.begin(), times.end(), requested) - times.begin();
  uint64_t touched = 0;
  for (const TouchedRegion& t : ReadTouchedRegions(TracePath("truth/residency." + pid + ".regions.tsv"))) {
    if (t.name == "every4th" && std::to_string(t.pid) == pid) touched = t.touched * 4096;
  }
  ASSERT_GT(touched, 0u);
  bool found = false;
  for (const Json& s : res["series"]) {
    if (s["stack"].get<int>() < 0) continue;
    bool every4th = false;
    for (const Json& f : d["stacks"][s["stack"].get<size_t>()]["summary"]) {
      every4th |= absl::StrContains(d["names"].at(f.get<size_t>()).get<std::string>(), "map_every4th");
    }
    if (!every4th) continue;
    found = true;
    EXPECT_EQ(s["bytes"][k].get<uint64_t>(), touched);
  }
  EXPECT_TRUE(found) << "no resident series named map_every4th";
  // The strip: each region's rss is maps' at the moment shown (the end).
  std::map<std::string, Json> maps_rss;
  for (const Json& r : RunJson("maps --json " + args)) maps_rss[r["start"].get<std::string>()] = r["rss"];
  ASSERT_EQ(d["regions"].size(), maps_rss.size());
  size_t known = 0;
  for (const Json& r : d["regions"]) {
    EXPECT_EQ(r["rss"], maps_rss[r["start"].get<std::string>()]) << r["start"];
    known += r["rss"].is_number();
    EXPECT_TRUE(r["kind"].is_string());
  }
  EXPECT_GT(known, 10u);
  EXPECT_TRUE(d["strip_snapshot"].is_number());
}

TEST(ReportPageDataTest, WithoutSnapshotsThereIsNoResidentSeries) {
  const Json d = PageData("-i " + TracePath("phases-fp.data") + " --buildid-dir " + TracePath("buildid-cache"),
                          "phases-data.html");
  EXPECT_TRUE(d["resident"].is_null());
  EXPECT_EQ(d["snapshots"], false);
  EXPECT_TRUE(d["strip_snapshot"].is_null());
  for (const Json& r : d["regions"]) EXPECT_TRUE(r["rss"].is_null());
}

}  // namespace
}  // namespace pageblame::testing

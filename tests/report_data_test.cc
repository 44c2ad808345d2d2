// The HTML report's data (report_data.h) on phases-fp.data: the strip holds
// every region, or past max_strip_regions runs of alike neighbours that
// still add up to every region's bytes; the time axis ends at maps' total.
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "processor/analysis/kind_classifier.h"
#include "processor/analysis/report_analysis.h"
#include "processor/base/format.h"
#include "processor/render/report_data.h"
#include "processor/session/session.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

struct Loaded {
  std::unique_ptr<session::Session> trace;
  uint32_t process = 0;
};

Loaded LoadPhases() {
  Loaded out;
  auto t = session::Session::Open(TraceSessionOptions("phases-fp.data"));
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return out;
  out.trace = std::move(t).value();
  for (const ManifestRow& r : ReadManifest()) {
    if (r["trace"] == "phases-fp.data") {
      out.process = out.trace->index().ProcessesWithPid(std::stoul(r["pid"])).at(0);
    }
  }
  return out;
}

// The page's data as `pageblame report` makes it, with a strip of at most
// `max_strip_regions` elements before it merges.
render::Json Data(const Loaded& l, size_t max_strip_regions = 2000) {
  analysis::KindClassifier kinds(l.trace->frames());
  analysis::ReportQuery q;
  q.process = l.process;
  q.kind_of = kinds.Function();
  q.max_strip_regions = max_strip_regions;
  return render::ReportData(*l.trace, render::ReportOptions(), analysis::AnalyzeReport(l.trace->index(), q));
}

uint64_t Hex(const render::Json& j) { return std::stoull(j.get<std::string>(), nullptr, 16); }

TEST(ReportDataTest, TheStripMergesAlikeNeighboursOnlyPastItsLimit) {
  Loaded l = LoadPhases();
  ASSERT_NE(l.trace, nullptr);
  const index::TraceIndex& idx = l.trace->index();
  uint64_t mapped = 0;
  const std::vector<VersionId> alive = idx.RegionsAt(l.process, index::kEndOfTrace);
  for (VersionId id : alive) mapped += idx.version(id).end - idx.version(id).start;

  render::Json all = Data(l);
  EXPECT_EQ(all["region_count"], alive.size());
  EXPECT_EQ(all["regions"].size(), alive.size());
  EXPECT_EQ(all["timeline"]["mapped"].back(), mapped);

  render::Json runs = Data(l, 2);
  EXPECT_EQ(runs["region_count"], alive.size());
  ASSERT_LT(runs["regions"].size(), alive.size());
  uint64_t bytes = 0, count = 0, prev_end = 0;
  for (const render::Json& r : runs["regions"]) {
    EXPECT_EQ(Hex(r["end"]) - Hex(r["start"]), r["bytes"].get<uint64_t>());
    EXPECT_GE(Hex(r["start"]), prev_end);
    prev_end = Hex(r["end"]);
    bytes += r["bytes"].get<uint64_t>();
    count += r["count"].get<uint64_t>();
  }
  EXPECT_EQ(bytes, mapped);
  EXPECT_EQ(count, alive.size());
  // phases.c's three 2 MiB grow_cache mappings are neighbours apart (P(10),
  // P(11), P(12) are 256 MiB apart): never one run.
  size_t grow_cache_runs = 0;
  for (const render::Json& r : runs["regions"]) grow_cache_runs += r["bytes"] == 2 << 20;
  EXPECT_EQ(grow_cache_runs, 3u);
}

// Each stack's label is its one-line summary in the application's frames
// (analysis/app_frames.h): phases.c's own functions, not libc's start.
TEST(ReportDataTest, StackLabelsAreTheApplicationsFrames) {
  Loaded l = LoadPhases();
  ASSERT_NE(l.trace, nullptr);
  const render::Json data = Data(l);
  ASSERT_TRUE(data.contains("stacks"));
  ASSERT_FALSE(data["stacks"].empty());
  bool grow_cache = false;
  // Frames are indices in "names", which holds each name once.
  const render::Json& names = data["names"];
  std::set<std::string> distinct;
  for (const render::Json& n : names) distinct.insert(n.get<std::string>());
  EXPECT_EQ(distinct.size(), names.size());
  for (const render::Json& s : data["stacks"]) {
    ASSERT_TRUE(s["summary"].is_array()) << s.dump();
    ASSERT_FALSE(s["summary"].empty()) << s.dump();
    for (const render::Json& f : s["summary"]) EXPECT_NE(names.at(f.get<size_t>()), "__libc_start_call_main");
    grow_cache |= names.at(s["summary"][0].get<size_t>()) == "grow_cache";
  }
  EXPECT_TRUE(grow_cache);
}

}  // namespace
}  // namespace pageblame::testing

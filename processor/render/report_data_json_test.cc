// The HTML report's data (report_data.h): the shape the page's script reads
// (every key, every index into "stacks" and "names" defined), and values
// that are other answers' own: the timeline's totals are `maps --at` at its
// boundaries, the resident line is the snapshots' bytes of the regions then,
// the lost spans are the trace's, the attribution is the one given; inside
// malloc's arenas, the split is maps' and attribute's.
#include "processor/render/report_data.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "processor/analysis/attribution_methods.h"
#include "processor/analysis/kind_classifier.h"
#include "processor/analysis/report_analysis.h"
#include "processor/base/format.h"
#include "processor/render/render_sessions_for_test.h"

namespace pageblame::render {
namespace {

Json PageData(const session::Session& s, uint32_t process, const ReportOptions& o = {}) {
  analysis::KindClassifier kinds(s.frames());
  analysis::ReportQuery q;
  q.process = process;
  q.rss = s.residency();
  q.heap = s.heap();
  q.kind_of = kinds.Function();
  q.buckets = 40;
  return ReportData(s, o, analysis::AnalyzeReport(s.index(), q));
}

// Mapped bytes and resident bytes (where a snapshot read them) of `pid` at
// `at`, as `maps --json --at` says them.
std::pair<uint64_t, uint64_t> MapsTotals(const session::Session& s, uint32_t pid, uint64_t at) {
  session::Selection sel = Select(s, pid);
  sel.at = at;
  const analysis::MapsAnswer a = MapsOf(s, sel, /*runs=*/false);
  uint64_t mapped = 0, rss = 0;
  for (const analysis::ProcessMaps& pm : a.processes) {
    for (const analysis::MapsRegion& r : pm.regions) {
      mapped += s.index().version(r.version).end - s.index().version(r.version).start;
      rss += r.rss.value_or(0);
    }
  }
  return {mapped, rss};
}

// A stack index: -1 (before the trace) or one of "stacks".
void ExpectStack(const Json& data, const Json& i) {
  ASSERT_TRUE(i.is_number_integer()) << i.dump();
  EXPECT_GE(i.get<int>(), -1);
  EXPECT_LT(i.get<int>(), static_cast<int>(data["stacks"].size()));
}

// rules-lost.data: rules.c recorded with a buffer small enough to lose events.
TEST(ReportDataJsonTest, EveryKeyAndIndexThePageReadsIsThere) {
  const session::Session& s = OpenTrace("rules-lost.data");
  const index::TraceIndex& idx = s.index();
  const uint32_t pid = ManifestPid("rules-lost.data");
  ReportOptions o;
  o.title = "rules-lost.data";
  const Json d = PageData(s, idx.ProcessesWithPid(pid).at(0), o);
  std::vector<std::string> keys;
  for (const auto& [k, v] : d.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"title", "pid", "comm", "start", "end", "at", "at_text", "timeline",
                                            "resident", "snapshots", "strip_snapshot", "heap_snapshot", "lost", "live", "region_count",
                                            "regions", "attribution", "methods", "stacks", "names"}));
  EXPECT_EQ(d["title"], "rules-lost.data");
  EXPECT_EQ(d["pid"], pid);
  EXPECT_EQ(d["start"], TimeSeconds(idx.stats().first_time));
  EXPECT_EQ(d["end"], TimeSeconds(idx.stats().last_time));
  EXPECT_TRUE(d["resident"].is_null());
  EXPECT_EQ(d["snapshots"], false);
  EXPECT_TRUE(d["attribution"].is_null());
  EXPECT_TRUE(d["heap_snapshot"].is_null());
  // Names once each; every frame and summary an index into them.
  for (const Json& st : d["stacks"]) {
    for (const char* k : {"frames", "summary"}) {
      ASSERT_TRUE(st[k].is_array());
      for (const Json& n : st[k]) EXPECT_LT(n.get<size_t>(), d["names"].size());
    }
    EXPECT_TRUE(st["call"].is_string());
  }
  // Issue 41: every stack in exactly one method, the one it names.
  std::vector<int> owner(d["stacks"].size(), -1);
  for (size_t m = 0; m < d["methods"].size(); ++m) {
    EXPECT_TRUE(d["methods"][m]["name"].is_string());
    for (const Json& i : d["methods"][m]["stacks"]) {
      ASSERT_LT(i.get<size_t>(), owner.size());
      EXPECT_EQ(owner[i.get<size_t>()], -1);
      owner[i.get<size_t>()] = static_cast<int>(m);
      EXPECT_EQ(d["stacks"][i.get<size_t>()]["method"], m);
    }
  }
  for (int o : owner) EXPECT_NE(o, -1);
  // The timeline: N+1 boundaries, totals at each, sparse steps per series.
  const Json& t = d["timeline"];
  const size_t n = t["times"].size();
  ASSERT_EQ(n, 41u);
  EXPECT_EQ(t["mapped"].size(), n);
  EXPECT_EQ(t["committed"].size(), n);
  EXPECT_EQ(t["series"][0]["stack"], -1);
  for (const Json& series : t["series"]) {
    ExpectStack(d, series["stack"]);
    for (const char* k : {"mapped", "committed"}) {
      ASSERT_EQ(series[k].size() % 2, 0u);
      for (size_t i = 0; i < series[k].size(); i += 2) {
        EXPECT_LT(series[k][i].get<size_t>(), n);
        if (i > 0) {
          EXPECT_LT(series[k][i - 2], series[k][i]);
        }
      }
    }
  }
  for (const Json& l : d["live"]) ExpectStack(d, l["stack"]);
  for (const Json& r : d["regions"]) {
    ExpectStack(d, r["origin"]);
    ExpectStack(d, r["commit"]);
    EXPECT_TRUE(r["history"].is_array());
  }
  // The trace's lost spans, as they are.
  ASSERT_FALSE(idx.stats().lost.empty());
  ASSERT_EQ(d["lost"].size(), idx.stats().lost.size());
  for (size_t i = 0; i < idx.stats().lost.size(); ++i) {
    EXPECT_EQ(d["lost"][i]["from"], TimeSeconds(idx.stats().lost[i].t_from));
    EXPECT_EQ(d["lost"][i]["count"], idx.stats().lost[i].count);
  }
}

// phases-fp.data: the timeline's totals are maps' at its boundaries; the
// flame graph's live bytes are those of the regions at `at`.
TEST(ReportDataJsonTest, TheTimelineAndTheLiveBytesAreMapsOwnTotals) {
  const session::Session& s = OpenTrace("phases-fp.data");
  const index::TraceIndex& idx = s.index();
  const uint32_t pid = ManifestPid("phases-fp.data");
  const uint32_t process = idx.ProcessesWithPid(pid).at(0);
  analysis::KindClassifier kinds(s.frames());
  analysis::ReportQuery q;
  q.process = process;
  q.kind_of = kinds.Function();
  q.buckets = 40;
  const analysis::ReportAnalysis a = analysis::AnalyzeReport(idx, q);
  const Json d = ReportData(s, ReportOptions(), a);
  const Json& t = d["timeline"];
  for (size_t k = 0; k < a.timeline.boundaries.size(); k += 8) {
    EXPECT_EQ(t["mapped"][k], MapsTotals(s, pid, a.timeline.boundaries[k]).first) << k;
  }
  const uint64_t at_end = MapsTotals(s, pid, index::kEndOfTrace).first;
  EXPECT_EQ(t["mapped"].back(), at_end);
  EXPECT_EQ(t["times"].back(), TimeSeconds(idx.stats().last_time));
  uint64_t live = 0, strip = 0;
  for (const Json& l : d["live"]) live += l["bytes"].get<uint64_t>();
  for (const Json& r : d["regions"]) strip += r["bytes"].get<uint64_t>();
  EXPECT_EQ(live, at_end);
  EXPECT_EQ(strip, at_end);
  EXPECT_EQ(d["region_count"], idx.RegionsAt(process, index::kEndOfTrace).size());
}

// residency.data: the resident line's point k is the snapshot's bytes of
// the regions at its time, as maps --json --at says them.
TEST(ReportDataJsonTest, TheResidentLineIsMapsResidentBytesAtEachSnapshot) {
  const session::Session& s = OpenTrace("residency.data", /*inlines=*/false);
  const uint32_t pid = 32331;  // traces/MANIFEST.md: residency.c's main process
  const Json d = PageData(s, s.index().ProcessesWithPid(pid).at(0));
  EXPECT_EQ(d["snapshots"], true);
  const Json& r = d["resident"];
  ASSERT_TRUE(r.is_object());
  ASSERT_GE(r["times"].size(), 2u);
  ASSERT_EQ(r["total"].size(), r["times"].size());
  const std::vector<residency::ResidencySnapshot>& snapshots = s.residency()->Of(pid);
  for (size_t k = 0; k < r["times"].size(); ++k) {
    uint64_t time = 0;
    for (const residency::ResidencySnapshot& snap : snapshots) {
      if (TimeSeconds(snap.time) == r["times"][k].get<double>()) time = snap.time;
    }
    ASSERT_NE(time, 0u) << "point " << k << " is no snapshot's time";
    EXPECT_EQ(r["total"][k], MapsTotals(s, pid, time).second) << "at " << FormatTime(time);
    for (const Json& series : r["series"]) EXPECT_EQ(series["bytes"].size(), r["times"].size());
  }
}

// With a region table, the attribution given, its stacks in the catalog.
TEST(ReportDataJsonTest, TheAttributionIsTheOneGiven) {
  const session::Session& s = OpenTrace("commit-trace.data");
  const uint32_t pid = ManifestPid("commit-trace.data");
  ReportOptions o;
  o.attribution = AttributionOf(s, Select(s, pid), testing::TracePath("maps/commit-trace.11890.maps"),
                                analysis::CreditBy::kCreate);
  o.attribution_title = "commit-trace.11890.maps";
  const Json d = PageData(s, s.index().ProcessesWithPid(pid).at(0), o);
  const Json& a = d["attribution"];
  ASSERT_TRUE(a.is_object());
  EXPECT_EQ(a["title"], "commit-trace.11890.maps");
  EXPECT_EQ(a["bytes"], o.attribution->bytes);
  EXPECT_EQ(a["by"], "create");
  ASSERT_EQ(a["regions"].size(), o.attribution->regions.size());
  uint64_t stacks = 0;
  for (const Json& st : a["stacks"]) {
    ExpectStack(d, st["stack"]);
    stacks += st["bytes"].get<uint64_t>();
  }
  EXPECT_EQ(stacks, o.attribution->created_bytes);
  // By method (issue 41): the same bytes, each method the sum of its stacks.
  uint64_t methods = 0;
  for (const Json& m : a["methods"]) {
    ASSERT_FALSE(m["stacks"].empty());
    EXPECT_GE(m["stack_count"].get<size_t>(), m["stacks"].size());
    for (const Json& i : m["stacks"]) ExpectStack(d, i);
    methods += m["bytes"].get<uint64_t>();
  }
  EXPECT_EQ(methods, o.attribution->created_bytes);
  for (const Json& r : a["regions"]) {
    uint64_t sum = r["before_trace_bytes"].get<uint64_t>() + r["unmapped_bytes"].get<uint64_t>();
    for (const Json& call : r["stacks"]) {
      ExpectStack(d, call[0]);
      sum += call[1].get<uint64_t>();
    }
    EXPECT_EQ(sum, r["bytes"].get<uint64_t>());
  }
}

// traces/arena-mix.data (arena_mix.c, recorded with heap snapshots): its
// pid, the one its pause maps (the region table) are named by.
uint32_t ArenaMixPid() {
  for (const auto& e : std::filesystem::directory_iterator(testing::TracePath("maps"))) {
    const std::string n = e.path().filename();
    if (absl::StartsWith(n, "arena-mix.") && absl::EndsWith(n, ".pause.maps")) {
      return static_cast<uint32_t>(std::stoul(n.substr(10, n.size() - 21)));
    }
  }
  ADD_FAILURE() << "no traces/maps/arena-mix.PID.pause.maps";
  return 0;
}

// On an arena kind: "in_use_bytes", "free_bytes" and "held_by_glibc" are
// the split's (null without one); on any other kind, none of them.
void ExpectSplit(const Json& j, std::optional<analysis::RegionKind> kind, const std::optional<analysis::HeapUse>& u,
                 const std::string& what) {
  if (!analysis::ArenaKind(kind)) {
    EXPECT_FALSE(j.contains("in_use_bytes") || j.contains("free_bytes") || j.contains("held_by_glibc")) << what;
    return;
  }
  ASSERT_TRUE(u.has_value()) << what;
  EXPECT_EQ(j["in_use_bytes"], u->in_use) << what;
  EXPECT_EQ(j["free_bytes"], u->free) << what;
  EXPECT_EQ(j["held_by_glibc"], u->in_use * 10 < u->in_use + u->free) << what;
}

// Issue 39: the strip's arena regions carry maps' split at `at` (one
// element per region here: far fewer than 2000), the attribution's stacks,
// regions and methods attribute's, and some method's arena memory is
// "freed; held by glibc" (churn_8m) while some other's is in use.
TEST(ReportDataJsonTest, InsideMallocArenasTheSplitIsMapsAndAttributes) {
  const session::Session& s = OpenTrace("arena-mix.data", /*inlines=*/false);
  ASSERT_NE(s.heap(), nullptr) << "arena-mix.data.heap was not read";
  const uint32_t pid = ArenaMixPid();
  const session::Selection sel = Select(s, pid);
  ReportOptions o;
  o.attribution = AttributionOf(s, sel, testing::TracePath(absl::StrCat("maps/arena-mix.", pid, ".pause.maps")),
                                analysis::CreditBy::kCreate);
  ASSERT_NE(o.attribution->heap_snapshot, nullptr);
  const uint32_t process = s.index().ProcessesWithPid(pid).at(0);
  const Json d = PageData(s, process, o);

  const analysis::MapsAnswer maps = MapsOf(s, sel, /*runs=*/false);
  ASSERT_EQ(maps.processes.size(), 1u);
  const analysis::ProcessMaps& pm = maps.processes[0];
  ASSERT_NE(pm.heap_snapshot, nullptr);
  EXPECT_EQ(d["heap_snapshot"], TimeSeconds(*pm.heap_snapshot->time));
  ASSERT_EQ(d["regions"].size(), pm.regions.size());
  size_t arena = 0;
  for (size_t i = 0; i < pm.regions.size(); ++i) {
    const Json& r = d["regions"][i];
    const index::Version& v = s.index().version(pm.regions[i].version);
    ASSERT_EQ(r["start"], Hex(v.start));
    ExpectSplit(r, pm.regions[i].kind, pm.regions[i].heap, "region " + Hex(v.start));
    arena += analysis::ArenaKind(pm.regions[i].kind);
  }
  EXPECT_GT(arena, 0u);

  const analysis::Attribution& a = *o.attribution;
  const Json& j = d["attribution"];
  EXPECT_EQ(j["heap_snapshot_time"], TimeSeconds(*a.heap_snapshot->time));
  ASSERT_EQ(j["stacks"].size(), a.stacks.size());
  for (size_t i = 0; i < a.stacks.size(); ++i) {
    ExpectSplit(j["stacks"][i], a.stacks[i].kind(), a.stacks[i].heap, absl::StrCat("stack ", i));
  }
  ASSERT_EQ(j["regions"].size(), a.regions.size());
  for (size_t i = 0; i < a.regions.size(); ++i) {
    ExpectSplit(j["regions"][i], a.regions[i].kind, a.regions[i].heap, absl::StrCat("region ", i));
  }
  const std::vector<analysis::MethodTotal> methods = analysis::AttributionByMethod(s.frames(), a, {});
  ASSERT_EQ(j["methods"].size(), methods.size());
  size_t held = 0, used = 0;
  for (size_t i = 0; i < methods.size(); ++i) {
    ExpectSplit(j["methods"][i], methods[i].total.kind(), methods[i].total.heap, absl::StrCat("method ", i));
    if (!analysis::ArenaKind(methods[i].total.kind())) continue;
    (j["methods"][i]["held_by_glibc"].get<bool>() ? held : used) += 1;
  }
  EXPECT_GT(held, 0u);
  EXPECT_GT(used, 0u);
}

}  // namespace
}  // namespace pageblame::render

// `pageblame maps` as printed: the text has one row per run of the answer
// (its range, size, prot and kind, the call that made it) under a heading
// whose totals are the rows' sum, and together the rows are the kernel's own
// /proc/PID/maps at the process's end; the JSON has every region of the
// answer with the contract's keys (docs/cli.md), sorted by pid then start,
// and says the same prot, origin and resident bytes as the text.
#include "processor/render/maps_report.h"

#include <sys/mman.h>

#include <map>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/analysis/syscall_format.h"
#include "processor/base/format.h"
#include "processor/render/render_sessions_for_test.h"
#include "processor/replay/call_events_for_test.h"
#include "processor/replay/replayer.h"
#include "processor/replay/trace_loader.h"
#include "processor/symbols/symbolizer_for_test.h"

namespace pageblame::render {
namespace {

using ::testing::HasSubstr;

// One row of the text: "  START-END PROT SIZE [RESIDENT]  LABEL KIND ORIGIN".
struct TextRow {
  uint64_t start = 0, end = 0;
  std::string prot, size, resident, rest;
};

// The rows under each "pid N (...)" heading, by heading line.
std::vector<std::pair<std::string, std::vector<TextRow>>> ParseMapsText(const std::string& text, bool resident) {
  static const std::regex kRow(R"(^  ([0-9a-f]+)-([0-9a-f]+) (\S{3}) +(\S+ \S+)(.*)$)");
  std::vector<std::pair<std::string, std::vector<TextRow>>> out;
  for (const absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    const std::string l(line);
    std::smatch m;
    if (absl::StartsWith(l, "pid ")) {
      out.push_back({l, {}});
    } else if (std::regex_match(l, m, kRow)) {
      EXPECT_FALSE(out.empty()) << "a row before any heading: " << l;
      if (out.empty()) continue;
      TextRow r;
      EXPECT_TRUE(absl::SimpleHexAtoi(m[1].str(), &r.start) && absl::SimpleHexAtoi(m[2].str(), &r.end)) << l;
      r.prot = m[3];
      r.size = m[4];
      r.rest = m[5];
      if (resident) {
        // " %10s" of HumanRss: "4.0 KiB" or "?".
        static const std::regex kResident(R"(^ +(\? |\S+ \S+ )(.*)$)");
        std::smatch rm;
        EXPECT_TRUE(std::regex_match(r.rest, rm, kResident)) << l;
        r.resident = std::string(absl::StripTrailingAsciiWhitespace(rm[1].str()));
        r.rest = rm[2];
      }
      out.back().second.push_back(r);
    } else {
      // The resident lines of a trace with snapshots; nothing else.
      EXPECT_TRUE(absl::StartsWith(l, "  resident: ") || absl::StartsWith(l, "  range ")) << l;
    }
  }
  return out;
}

const index::Version& FirstOf(const index::TraceIndex& idx, const analysis::ProcessMaps& pm,
                              const analysis::RegionRun& run) {
  return idx.version(pm.regions[run.first].version);
}

TEST(MapsTextTest, OneRowPerRunAsTheAnswerSaysItUnderAHeadingThatSumsThem) {
  const session::Session& s = OpenTrace("rules-trace.data");
  const index::TraceIndex& idx = s.index();
  for (const bool split : {false, true}) {
    SCOPED_TRACE(split ? "--split" : "runs");
    const analysis::MapsAnswer a = MapsOf(s, Select(s, std::nullopt), /*runs=*/true, split);
    const auto blocks = ParseMapsText(MapsText(s, a), /*resident=*/false);
    ASSERT_EQ(blocks.size(), a.processes.size());
    ASSERT_EQ(a.processes.size(), 3u);  // rules.c, its fork child and its fork+exec child
    for (size_t p = 0; p < a.processes.size(); ++p) {
      const analysis::ProcessMaps& pm = a.processes[p];
      const index::Process& proc = idx.process(pm.process);
      const auto& [heading, rows] = blocks[p];
      SCOPED_TRACE(heading);
      EXPECT_TRUE(absl::StartsWith(heading, absl::StrCat("pid ", proc.pid, " (rules), exited at ",
                                                         FormatTime(proc.t_exit), ": ", pm.runs.size(),
                                                         split ? " region versions at end; " : " regions at end; ")));
      ASSERT_EQ(rows.size(), pm.runs.size());
      if (split) {
        EXPECT_EQ(rows.size(), pm.regions.size());
      }
      uint64_t sum = 0, created = 0;
      for (size_t i = 0; i < rows.size(); ++i) {
        const analysis::RegionRun& run = pm.runs[i];
        const TextRow& row = rows[i];
        SCOPED_TRACE(Hex(row.start));
        EXPECT_EQ(row.start, run.start);
        EXPECT_EQ(row.end, run.end);
        EXPECT_EQ(row.size, HumanBytes(row.end - row.start));
        EXPECT_EQ(row.prot, analysis::RegionProt(FirstOf(idx, pm, run).attrs));
        ASSERT_TRUE(run.kind.has_value());
        EXPECT_THAT(row.rest, HasSubstr(absl::StrCat(" ", analysis::KindName(*run.kind), " ")));
        if (run.origin.top.valid()) {
          const index::CallEvent& ev = idx.event(run.origin.top);
          EXPECT_THAT(row.rest, HasSubstr(absl::StrCat(std::string(decode::SyscallName(ev.syscall)), " at ", FormatTime(ev.time),
                                                       " by ", ev.tid, ": ")));
          created += row.end - row.start;
        } else {
          EXPECT_THAT(row.rest, HasSubstr("existed before the trace"));
        }
        if (run.commit.top.valid()) {
          EXPECT_THAT(row.rest, HasSubstr(absl::StrCat("; committed by ", std::string(decode::SyscallName(idx.event(run.commit.top).syscall)))));
        }
        if (i > 0) {
          EXPECT_GE(row.start, rows[i - 1].end);  // by address, disjoint
        }
        sum += row.end - row.start;
      }
      // The heading's totals are the rows' bytes.
      EXPECT_EQ(sum, pm.created_bytes + pm.before_trace_bytes);
      EXPECT_EQ(created, pm.created_bytes);
      EXPECT_THAT(heading, HasSubstr(absl::StrCat(HumanBytes(created), " created during the trace, ",
                                                  HumanBytes(sum - created), " from before it")));
    }
  }
}

// commit.c (traces/src) reserves, commits and decommits: the rows it made
// are exactly what the kernel listed at its end, page for page, prot for prot.
TEST(MapsTextTest, TheRowsMadeDuringTheTraceAreTheKernelsMapsAtTheEnd) {
  const session::Session& s = OpenTrace("commit-trace.data");
  const uint32_t pid = ManifestPid("commit-trace.data");
  const analysis::MapsAnswer a = MapsOf(s, Select(s, pid), /*runs=*/true);
  const auto blocks = ParseMapsText(MapsText(s, a), false);
  ASSERT_EQ(blocks.size(), 1u);
  std::map<std::string, testing::PageSet> text;  // prot -> pages rows made during the trace say
  for (const TextRow& r : blocks[0].second) {
    if (!absl::StrContains(r.rest, "existed before the trace")) text[r.prot].Add(r.start, r.end);
  }
  std::string exe;
  for (const testing::ManifestRow& m : testing::ReadManifest()) {
    if (m["trace"] == "commit-trace.data") exe = m["exe"];
  }
  const std::vector<testing::MapsRow> kernel = testing::ReadMapsFile(testing::TracePath("maps/commit-trace.11890.maps"));
  const testing::PageSet made = testing::ProcessMadePages(kernel, exe);
  ASSERT_GT(made.Bytes(), 0u);
  std::map<std::string, testing::PageSet> expected;
  for (const testing::MapsRow& k : kernel) {
    testing::PageSet row;
    row.Add(k.start, k.end);
    testing::PageSet part = row.Intersect(made);
    for (const auto& [start, end] : part.ranges()) expected[k.perms.substr(0, 3)].Add(start, end);
  }
  ASSERT_TRUE(expected.count("---")) << "commit.c's reservation is gone from the maps file";
  for (const auto& [prot, pages] : expected) {
    EXPECT_TRUE(text[prot] == pages) << prot << ": in the text, not the kernel's:" << text[prot].Minus(pages).Describe()
                                     << "\nthe kernel's, not in the text:" << pages.Minus(text[prot]).Describe();
  }
  for (const auto& [prot, pages] : text) EXPECT_TRUE(expected.count(prot)) << prot << pages.Describe();
}

std::string MapsJson(const session::Session& s, const analysis::MapsAnswer& a) {
  return WrittenToFile([&](std::FILE* f) { return WriteMapsJson(s, a, f); });
}

TEST(MapsJsonTest, EveryRegionWithTheContractsKeysSortedByPidThenStart) {
  const session::Session& s = OpenTrace("rules-trace.data");
  const index::TraceIndex& idx = s.index();
  const analysis::MapsAnswer a = MapsOf(s, Select(s, std::nullopt), /*runs=*/false);
  const std::string text = MapsJson(s, a);
  const Json j = Json::parse(text);
  // The streamed text is what the DOM would print (the layout of every answer).
  EXPECT_EQ(text, DumpJson(j) + "\n");
  ASSERT_TRUE(j.is_array());
  std::vector<const analysis::MapsRegion*> regions;
  std::vector<uint32_t> pids;
  for (const analysis::ProcessMaps& pm : a.processes) {
    for (const analysis::MapsRegion& r : pm.regions) {
      regions.push_back(&r);
      pids.push_back(idx.process(pm.process).pid);
    }
  }
  ASSERT_EQ(j.size(), regions.size());
  const std::vector<std::string> keys = {"pid", "start", "end", "prot", "path", "rss", "kind", "origin", "commit"};
  for (size_t i = 0; i < j.size(); ++i) {
    const Json& r = j[i];
    const index::Version& v = idx.version(regions[i]->version);
    SCOPED_TRACE(r.dump());
    std::vector<std::string> got;
    for (const auto& [k, value] : r.items()) got.push_back(k);
    if (analysis::ArenaKind(regions[i]->kind)) {
      // Malloc arena kinds: in use and free, null without heap snapshots.
      EXPECT_EQ(got, (std::vector<std::string>{"pid", "start", "end", "prot", "path", "rss", "kind", "in_use_bytes",
                                               "free_bytes", "origin", "commit"}));
      EXPECT_TRUE(r["in_use_bytes"].is_null() && r["free_bytes"].is_null());
    } else {
      EXPECT_EQ(got, keys);
    }
    EXPECT_EQ(r["pid"], pids[i]);
    EXPECT_EQ(r["start"], Hex(v.start));
    EXPECT_EQ(r["end"], Hex(v.end));
    EXPECT_EQ(r["prot"], analysis::RegionProt(v.attrs));
    EXPECT_EQ(r["kind"], std::string(analysis::KindName(regions[i]->kind)));
    EXPECT_TRUE(r["rss"].is_null());  // no snapshots: unknown, never 0
    EXPECT_EQ(r["path"].is_null(), idx.strings().Get(v.attrs.path).empty());
    for (const auto& [key, call] : {std::make_pair("origin", v.origin), std::make_pair("commit", v.commit)}) {
      ASSERT_EQ(r[key].is_null(), !call.valid()) << key;
      if (!call.valid()) continue;
      const index::CallEvent& ev = idx.event(call);
      EXPECT_EQ(r[key]["syscall"], std::string(decode::SyscallName(ev.syscall)));
      EXPECT_EQ(r[key]["time"], TimeSeconds(ev.time));
      EXPECT_EQ(r[key]["pid"], ev.pid);
      EXPECT_EQ(r[key]["tid"], ev.tid);
      ASSERT_TRUE(r[key]["stack"].is_array());
      EXPECT_EQ(r[key]["stack"].size(), s.frames().Frames(ev).size());
    }
    if (i > 0) {
      const Json& prev = j[i - 1];
      const uint64_t prev_start = std::stoull(prev["start"].get<std::string>(), nullptr, 16);
      EXPECT_TRUE(prev["pid"] < r["pid"] || (prev["pid"] == r["pid"] && prev_start < v.start)) << "out of order";
    }
  }
}

// residency.data has snapshots (residency.data.rss): each region's resident
// bytes are the answer's, in JSON (null when unknown) and in the text's
// resident column ("?").
TEST(MapsJsonTest, ResidentBytesAreTheAnswersInBothForms) {
  const session::Session& s = OpenTrace("residency.data", /*inlines=*/false);
  ASSERT_NE(s.residency(), nullptr);
  const analysis::MapsAnswer a = MapsOf(s, Select(s, std::nullopt), /*runs=*/true, /*split=*/true);
  ASSERT_TRUE(a.snapshots);
  const Json j = Json::parse(MapsJson(s, a));
  const auto blocks = ParseMapsText(MapsText(s, a), /*resident=*/true);
  ASSERT_EQ(blocks.size(), a.processes.size());
  size_t i = 0, known = 0, unknown = 0;
  for (size_t p = 0; p < a.processes.size(); ++p) {
    const analysis::ProcessMaps& pm = a.processes[p];
    ASSERT_EQ(blocks[p].second.size(), pm.regions.size());  // --split: a row per region
    for (size_t k = 0; k < pm.regions.size(); ++k, ++i) {
      const std::optional<uint64_t> rss = pm.regions[k].rss;
      rss ? ++known : ++unknown;
      EXPECT_EQ(j[i]["rss"], rss ? Json(*rss) : Json(nullptr));
      EXPECT_EQ(blocks[p].second[k].resident, rss ? HumanBytes(*rss) : "?");
    }
  }
  EXPECT_GT(known, 0u);
  EXPECT_GT(unknown, 0u);  // the PROT_NONE reservations, which no snapshot reads
}

TEST(MapsReportTest, AnAnswerWithoutProcessesSaysSo) {
  const session::Session& s = OpenTrace("phases-fp.data");
  EXPECT_EQ(MapsText(s, analysis::MapsAnswer{}), "no process in the trace matches\n");
  EXPECT_EQ(MapsJson(s, analysis::MapsAnswer{}), "[]\n");
}

// A session over a hand-made replay: process 1 has a mapping perf reported
// in an MMAP record without its protection (perf's MMAP, not MMAP2), and one
// it made itself.
class UnknownProtTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto idx = std::make_unique<index::TraceIndex>();
    auto sym = std::make_unique<symbols::SymbolizerWithMaps>(symbols::SymbolizerOptions{});
    replay::Replayer replayer(idx.get(), nullptr);
    replay::TraceEvent m(replay::TraceEvent::Kind::kMmap);
    m.time = 5;
    m.pid = m.tid = 1;
    m.mmap().start = 0x400000;
    m.mmap().len = 0x2000;
    m.mmap().has_prot = false;
    m.mmap().filename = idx->strings().Intern("/bin/prog");
    replayer.Apply(m);
    auto [in, out] = replay::CallEvents(10, 1, 1, decode::Syscall::kMmap,
                                        {0x10000000, 0x1000, PROT_READ | PROT_WRITE,
                                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, ~0ull, 0},
                                        0x10000000);
    replayer.Apply(in);
    replayer.Apply(out);
    replayer.Finish();
    idx->Finalize();
    session::SessionOptions o;
    o.path = "hand-made.data";
    o.residency.off = true;
    auto made = session::Session::Of(
        std::make_unique<replay::LoadedTrace>(std::move(idx), std::move(sym), perf::FileInfo{}, ""), o);
    ASSERT_TRUE(made.ok()) << made.status();
    session_ = *std::move(made);
  }
  std::unique_ptr<session::Session> session_;
};

// docs/cli.md: "`prot` is `???` for pages whose protection the trace cannot
// know" — in JSON as in text.
TEST_F(UnknownProtTest, AProtTheTraceCannotKnowIsSaidAlikeInTextAndJson) {
  const session::Session& s = *session_;
  const analysis::MapsAnswer a = MapsOf(s, Select(s, std::nullopt), /*runs=*/true, /*split=*/true);
  ASSERT_EQ(a.processes.size(), 1u);
  ASSERT_EQ(a.processes[0].regions.size(), 2u);
  const Json j = Json::parse(MapsJson(s, a));
  const auto blocks = ParseMapsText(MapsText(s, a), false);
  ASSERT_EQ(blocks.size(), 1u);
  ASSERT_EQ(blocks[0].second.size(), 2u);
  EXPECT_EQ(blocks[0].second[0].prot, "???");
  EXPECT_EQ(j[0]["prot"], std::string("???"));
  EXPECT_EQ(blocks[0].second[1].prot, "rw-");
  EXPECT_EQ(j[1]["prot"], std::string("rw-"));
}

}  // namespace
}  // namespace pageblame::render

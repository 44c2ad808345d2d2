// `pageblame attribute` as printed, for the regions of the kernel's own
// /proc/PID/maps: the text's headline counts the table's rows and bytes,
// its first screen lists the committed stacks in the answer's order with
// the answer's figures and its total line is their sum; the JSON keeps the
// contract of docs/cli.md: in each region sum(stacks.bytes) +
// before_trace_bytes + unmapped_bytes == bytes.
#include "processor/render/attribute_render.h"

#include <regex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/format.h"
#include "processor/render/render_sessions_for_test.h"
#include "processor/render/rss_text.h"

namespace pageblame::render {
namespace {

using ::testing::HasSubstr;

// One row of the first screen's table, cells as printed.
struct TopRow {
  std::vector<std::string> cells;  // #, committed, [resident], regions, calls, kind, app frames
};
struct TopTable {
  std::vector<TopRow> rows;
  std::string total_committed;
  size_t total_regions = 0, total_calls = 0, total_stacks = 0;
  std::string more;  // the "... N more stacks" line, if any
  std::vector<std::string> lines;  // every line of the table, header to total
};

TopTable ParseTopTable(const std::string& text) {
  TopTable t;
  static const std::regex kTotal(R"(^ +(\S+ \S+)( +\S+(?: \S+)?)? +(\d+) +(\d+) +total: (\d+) stacks?$)");
  bool in = false;
  for (absl::string_view l : absl::StrSplit(text, '\n')) {
    const std::string line(l);
    if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), "#  committed")) {
      in = true;
    } else if (!in) {
      continue;
    }
    t.lines.push_back(line);
    std::smatch m;
    const absl::string_view stripped = absl::StripLeadingAsciiWhitespace(line);
    if (absl::StartsWith(stripped, "#  ") || absl::StartsWith(stripped, "---")) continue;
    if (std::regex_match(line, m, kTotal)) {
      t.total_committed = m[1];
      t.total_regions = std::stoul(m[3]);
      t.total_calls = std::stoul(m[4]);
      t.total_stacks = std::stoul(m[5]);
      continue;
    }
    if (absl::StartsWith(line, "  ... ")) {
      t.more = line;
      break;
    }
    if (line.empty()) break;
    TopRow r;
    // Cells are two spaces apart (more where padded).
    std::vector<std::string> cells;
    for (absl::string_view c : absl::StrSplit(absl::StripLeadingAsciiWhitespace(line), "  ", absl::SkipEmpty())) {
      cells.push_back(std::string(absl::StripAsciiWhitespace(c)));
    }
    r.cells = cells;
    t.rows.push_back(r);
  }
  return t;
}

analysis::Attribution CommitAttribution(const session::Session& s, analysis::CreditBy by) {
  return AttributionOf(s, Select(s, ManifestPid("commit-trace.data"), "end", session::PeakOf::kCommitted),
                       testing::TracePath("maps/commit-trace.11890.maps"), by);
}

// commit.c's address space at its end (traces/maps/commit-trace.11890.maps),
// credited to the committing calls.
TEST(AttributeTextTest, TheFirstScreenIsTheAnswersCommittedStacksAndItsTotalTheirSum) {
  const session::Session& s = OpenTrace("commit-trace.data");
  const analysis::Attribution a = CommitAttribution(s, analysis::CreditBy::kCommit);
  const std::string text = AttributeText(s, a);
  // The headline: the table's rows and bytes, each byte in one bucket.
  const std::vector<testing::MapsRow> kernel = testing::ReadMapsFile(testing::TracePath("maps/commit-trace.11890.maps"));
  uint64_t bytes = 0;
  for (const testing::MapsRow& r : kernel) bytes += r.end - r.start;
  EXPECT_EQ(a.bytes, bytes);
  EXPECT_EQ(a.created_bytes + a.before_trace_bytes + a.unmapped_bytes, a.bytes);
  EXPECT_THAT(text, HasSubstr(absl::StrCat("pid 11890 (commit) at end: ", kernel.size(), " regions, ", bytes, " bytes (",
                                           HumanBytes(bytes), "): ", HumanBytes(a.created_bytes),
                                           " committed or created by ")));
  EXPECT_THAT(text, HasSubstr(absl::StrCat(HumanBytes(a.before_trace_bytes), " from before the trace, ",
                                           HumanBytes(a.unmapped_bytes), " not mapped\n")));

  const TopTable t = ParseTopTable(text);
  std::vector<size_t> committed;  // a.stacks indices of the stacks with committed bytes
  for (size_t i = 0; i < a.stacks.size(); ++i) {
    if (a.stacks[i].committed > 0) committed.push_back(i);
  }
  ASSERT_FALSE(committed.empty());
  ASSERT_LE(committed.size(), 20u) << "all fit on the first screen";
  ASSERT_EQ(t.rows.size(), committed.size());
  uint64_t sum = 0;
  std::set<std::string> kinds;
  for (size_t k = 0; k < t.rows.size(); ++k) {
    const std::vector<std::string>& c = t.rows[k].cells;
    ASSERT_EQ(c.size(), 6u) << absl::StrJoin(c, "|");
    const analysis::StackTotal& st = a.stacks[committed[k]];
    EXPECT_EQ(c[0], absl::StrCat(committed[k] + 1));  // its rank in the answer
    EXPECT_EQ(c[1], HumanBytes(st.committed));
    EXPECT_EQ(c[2], absl::StrCat(st.regions));
    EXPECT_EQ(c[3], absl::StrCat(st.calls));
    ASSERT_TRUE(st.kind().has_value());
    // Malloc arena kinds are marked (their footnote says why).
    EXPECT_EQ(c[4], absl::StrCat(analysis::KindName(*st.kind()), analysis::ArenaKind(st.kind()) ? "*" : ""));
    kinds.insert(c[4]);
    if (k > 0) {
      EXPECT_GE(a.stacks[committed[k - 1]].committed, st.committed) << "ranked by committed bytes";
    }
    sum += st.committed;
  }
  // The total line is the rows' sum: every committed byte of the answer.
  EXPECT_EQ(sum, a.committed_bytes);
  EXPECT_EQ(t.total_committed, HumanBytes(sum));
  EXPECT_EQ(t.total_stacks, t.rows.size());
  EXPECT_TRUE(t.more.empty());
  // Thread stacks (commit.c's threads) and its anonymous commits at least.
  EXPECT_TRUE(kinds.count("thread stack") && kinds.count("anon")) << absl::StrJoin(kinds, ",");
}

// rules.c's 41 committed stacks: 20 on the first screen, the rest counted;
// every line within the width asked.
TEST(AttributeTextTest, AFirstScreenCutAtItsRowsSaysHowManyMoreAndKeepsItsWidth) {
  const session::Session& s = OpenTrace("rules-trace.data");
  const analysis::Attribution a =
      AttributionOf(s, Select(s, 10981, "end", session::PeakOf::kCommitted),
                    testing::TracePath("maps/rules-trace.10981.maps"), analysis::CreditBy::kCommit);
  size_t committed = 0;
  for (const analysis::StackTotal& st : a.stacks) committed += st.committed > 0;
  ASSERT_GT(committed, 20u);
  for (const size_t width : {120u, 80u}) {
    TextOptions o;
    o.width = width;
    const TopTable t = ParseTopTable(AttributeText(s, a, o));
    EXPECT_EQ(t.rows.size(), 20u);
    EXPECT_EQ(t.total_stacks, committed);
    EXPECT_EQ(t.more, absl::StrCat("  ... ", committed - 20, " more stacks with committed bytes (--detail lists every stack)"));
    EXPECT_EQ(t.total_committed, HumanBytes(a.committed_bytes));
    for (const std::string& line : t.lines) EXPECT_LE(line.size(), width) << line;
  }
  // Given the rows, the table holds them all, and the sum is its total.
  TextOptions all;
  all.top_rows = 100;
  const TopTable t = ParseTopTable(AttributeText(s, a, all));
  ASSERT_EQ(t.rows.size(), committed);
  uint64_t sum = 0;
  for (const TopRow& r : t.rows) sum += a.stacks[std::stoul(r.cells[0]) - 1].committed;
  EXPECT_EQ(sum, a.committed_bytes);
  EXPECT_TRUE(t.more.empty());
}

TEST(AttributeTextTest, DetailListsEveryRegionAndEveryStack) {
  const session::Session& s = OpenTrace("commit-trace.data");
  const analysis::Attribution a = CommitAttribution(s, analysis::CreditBy::kCreate);
  TextOptions o;
  o.detail = true;
  const std::string text = AttributeText(s, a, o);
  EXPECT_THAT(text, HasSubstr("(credited to the creating call):\n"));
  for (const analysis::RegionAttribution& r : a.regions) {
    EXPECT_THAT(text, HasSubstr(absl::StrCat("\n", Hex(r.region.start), "-", Hex(r.region.end), "  ",
                                             HumanBytes(r.region.size()), "  ")));
  }
  for (size_t i = 0; i < a.stacks.size(); ++i) {
    EXPECT_THAT(text, HasSubstr(absl::StrCat("\nstack #", i + 1, ": ", a.stacks[i].bytes, " bytes (")));
  }
  EXPECT_THAT(text, ::testing::Not(HasSubstr(absl::StrCat("\nstack #", a.stacks.size() + 1, ": "))));
}

TEST(AttributeJsonTest, EachRegionsStacksBeforeTraceAndUnmappedBytesAddUpToIt) {
  const session::Session& s = OpenTrace("commit-trace.data");
  for (const analysis::CreditBy by : {analysis::CreditBy::kCommit, analysis::CreditBy::kCreate}) {
    const char* key = by == analysis::CreditBy::kCommit ? "commit" : "origin";
    SCOPED_TRACE(key);
    const analysis::Attribution a = CommitAttribution(s, by);
    const Json j = AttributeJson(s, a);
    ASSERT_EQ(j["regions"].size(), a.regions.size());
    uint64_t stacks_in_regions = 0;
    size_t thread_stacks = 0;
    for (size_t i = 0; i < a.regions.size(); ++i) {
      const Json& r = j["regions"][i];
      SCOPED_TRACE(r["start"].get<std::string>());
      EXPECT_EQ(r["start"], Hex(a.regions[i].region.start));
      EXPECT_EQ(r["end"], Hex(a.regions[i].region.end));
      uint64_t sum = 0;
      for (const Json& st : r["stacks"]) {
        sum += st["bytes"].get<uint64_t>();
        ASSERT_TRUE(st[key].is_object());
        EXPECT_TRUE(st["rss"].is_null());
      }
      stacks_in_regions += sum;
      EXPECT_EQ(sum + r["before_trace_bytes"].get<uint64_t>() + r["unmapped_bytes"].get<uint64_t>(),
                r["bytes"].get<uint64_t>());
      EXPECT_EQ(r["bytes"], a.regions[i].region.end - a.regions[i].region.start);
      if (r["kind"] == "thread stack") {
        ++thread_stacks;
        // Who started the thread: the commit.c thread's creator.
        ASSERT_TRUE(r.contains("started_by")) << r.dump();
        EXPECT_EQ(r["started_by"]["comm"], "commit");
      }
    }
    EXPECT_GT(thread_stacks, 0u);
    uint64_t stacks = 0, committed = 0;
    for (const Json& st : j["stacks"]) {
      std::vector<std::string> keys;
      for (const auto& [k, v] : st.items()) keys.push_back(k);
      // Arena kinds: in use and free, null without a heap snapshot.
      if (st["kind"] == "malloc" || st["kind"] == "heap") {
        EXPECT_EQ(keys, (std::vector<std::string>{"bytes", "rss", "committed_bytes", "regions", "kind", "in_use_bytes",
                                                  "free_bytes", "table_rss", "table_rss_partly", key}));
        EXPECT_TRUE(st["in_use_bytes"].is_null() && st["free_bytes"].is_null());
      } else {
        EXPECT_EQ(keys, (std::vector<std::string>{"bytes", "rss", "committed_bytes", "regions", "kind", "table_rss",
                                                  "table_rss_partly", key}));
      }
      stacks += st["bytes"].get<uint64_t>();
      committed += st["committed_bytes"].get<uint64_t>();
    }
    EXPECT_EQ(stacks, stacks_in_regions);
    EXPECT_EQ(stacks, a.created_bytes);
    EXPECT_EQ(committed, a.committed_bytes);
    EXPECT_TRUE(j["rss"].is_null());
    EXPECT_TRUE(j["rss_snapshot_time"].is_null());
  }
}

// residency.data with its snapshots: resident bytes where a snapshot read
// them, the snapshot named in the text and the JSON.
TEST(AttributeJsonTest, ResidentBytesAreTheSnapshotsInTextAndJson) {
  const session::Session& s = OpenTrace("residency.data", /*inlines=*/false);
  const analysis::Attribution a =
      AttributionOf(s, Select(s, 32331, "end", session::PeakOf::kCommitted),
                    testing::TracePath("maps/residency.32331.pause.maps"), analysis::CreditBy::kCommit);
  ASSERT_NE(a.snapshot, nullptr);
  ASSERT_TRUE(a.rss.has_value());
  const Json j = AttributeJson(s, a);
  EXPECT_EQ(j["rss"], *a.rss);
  EXPECT_EQ(j["rss_snapshot_time"], TimeSeconds(a.snapshot->time));
  uint64_t regions_rss = 0;
  for (size_t i = 0; i < a.regions.size(); ++i) {
    EXPECT_EQ(j["regions"][i]["rss"], a.regions[i].rss ? Json(*a.regions[i].rss) : Json(nullptr));
    regions_rss += a.regions[i].rss.value_or(0);
  }
  EXPECT_EQ(regions_rss, *a.rss);
  const std::string text = AttributeText(s, a);
  EXPECT_THAT(text, HasSubstr(absl::StrCat("\n", HumanRss(a.rss), " of it resident (",
                                           DescribeSnapshot(a.snapshot, a.at), ")\n")));
  const TopTable t = ParseTopTable(text);
  ASSERT_FALSE(t.rows.empty());
  for (const TopRow& r : t.rows) {
    ASSERT_EQ(r.cells.size(), 7u);  // with a resident column
    EXPECT_EQ(r.cells[2], HumanRss(a.stacks[std::stoul(r.cells[0]) - 1].rss));
  }
}

}  // namespace
}  // namespace pageblame::render

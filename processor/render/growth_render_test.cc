// `pageblame growth` as printed: the text's headline and first screen say
// the Growth's totals and stacks (the table's total line is its rows' sum),
// the JSON has the contract's fields (docs/cli.md) with stacks and
// before_trace adding up to the total at both ends, and resident bytes a
// snapshot cannot speak for are "?" in text and null in JSON, never 0.
#include "processor/render/growth_render.h"

#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/format.h"
#include "processor/render/render_sessions_for_test.h"

namespace pageblame::render {
namespace {

using ::testing::HasSubstr;

// As the text says a signed byte count: "+1.5 MiB", "-8.0 KiB", "0 B".
std::string Signed(int64_t n) {
  if (n == 0) return "0 B";
  return absl::StrCat(n < 0 ? "-" : "+", HumanBytes(n < 0 ? 0 - static_cast<uint64_t>(n) : static_cast<uint64_t>(n)));
}
int64_t Diff(uint64_t from, uint64_t to) { return static_cast<int64_t>(to) - static_cast<int64_t>(from); }

// The first screen's table: its rows' cells and the total line's.
struct Table {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> total;
};

Table FirstScreen(const std::string& text) {
  Table t;
  bool in = false;
  for (absl::string_view l : absl::StrSplit(text, '\n')) {
    const absl::string_view s = absl::StripLeadingAsciiWhitespace(l);
    if (absl::StartsWith(s, "#  committed")) {
      in = true;
      continue;
    }
    if (!in || absl::StartsWith(s, "---")) continue;
    if (s.empty()) break;
    std::vector<std::string> cells;
    for (absl::string_view c : absl::StrSplit(s, "  ", absl::SkipEmpty())) {
      cells.emplace_back(absl::StripAsciiWhitespace(c));
    }
    if (absl::StartsWith(cells.back(), "total: ")) {
      t.total = cells;
    } else {
      t.rows.push_back(cells);
    }
  }
  return t;
}

// phases.c (traces/src): a second phase maps 6 MiB from grow_cache; from
// between the phases (docs/cli.md's example).
analysis::Growth PhasesGrowth(const session::Session& s) {
  return GrowthOf(s, Select(s, std::nullopt), "+0.2", "end", analysis::CreditBy::kCreate);
}

TEST(GrowthTextTest, TheHeadlineAndTheFirstScreenSayTheGrowthsTotals) {
  const session::Session& s = OpenTrace("phases-fp.data");
  const index::TraceIndex& idx = s.index();
  const analysis::Growth g = PhasesGrowth(s);
  const std::string text = GrowthText(s, g);
  EXPECT_TRUE(absl::StartsWith(
      text, absl::StrCat("growth of pid ", ManifestPid("phases-fp.data"), " (phases) from ", FormatTime(g.from),
                         " to end (", FormatTime(idx.stats().last_time), "): mapped ", HumanBytes(g.total_from.mapped),
                         " -> ", HumanBytes(g.total_to.mapped), " (", Signed(Diff(g.total_from.mapped, g.total_to.mapped)),
                         "), committed ", HumanBytes(g.total_from.committed), " -> ", HumanBytes(g.total_to.committed),
                         " (", Signed(Diff(g.total_from.committed, g.total_to.committed)), ")\n")))
      << text;
  EXPECT_THAT(text, HasSubstr(absl::StrCat("each page is credited to the call that created it; ", g.stacks.size(),
                                           " stacks\n")));
  EXPECT_THAT(text, HasSubstr(absl::StrCat("\nalso: from before the trace, committed ",
                                           HumanBytes(g.before_from.committed), " -> ",
                                           HumanBytes(g.before_to.committed), "\n")));
  // The table: the stacks with committed bytes at either end, in the
  // answer's order, then their sum.
  const Table t = FirstScreen(text);
  std::vector<size_t> shown;
  for (size_t i = 0; i < g.stacks.size(); ++i) {
    if (g.stacks[i].from.committed != 0 || g.stacks[i].to.committed != 0) shown.push_back(i);
  }
  ASSERT_EQ(t.rows.size(), shown.size());
  ASSERT_LT(shown.size(), g.stacks.size()) << "phases.c's PROT_NONE arena is not in the table";
  int64_t growth = 0;
  uint64_t now = 0, regions = 0, calls = 0;
  for (size_t k = 0; k < shown.size(); ++k) {
    const analysis::StackGrowth& st = g.stacks[shown[k]];
    const std::vector<std::string>& c = t.rows[k];
    ASSERT_EQ(c.size(), 7u) << absl::StrJoin(c, "|");
    EXPECT_EQ(c[0], absl::StrCat(shown[k] + 1));
    EXPECT_EQ(c[1], Signed(st.committed_growth()));
    EXPECT_EQ(c[2], HumanBytes(st.to.committed));
    EXPECT_EQ(c[3], absl::StrCat(st.to.regions));
    EXPECT_EQ(c[4], absl::StrCat(st.calls));
    growth += st.committed_growth();
    now += st.to.committed;
    regions += st.to.regions;
    calls += st.calls;
  }
  ASSERT_EQ(t.total.size(), 5u) << absl::StrJoin(t.total, "|");
  EXPECT_EQ(t.total[0], Signed(growth));
  EXPECT_EQ(t.total[1], HumanBytes(now));
  EXPECT_EQ(t.total[2], absl::StrCat(regions));
  EXPECT_EQ(t.total[3], absl::StrCat(calls));
  EXPECT_EQ(t.total[4], absl::StrCat("total: ", shown.size(), " stacks"));
  // The rows' sum is the Growth's total less what is from before the trace.
  EXPECT_EQ(now, g.total_to.committed - g.before_to.committed);
  EXPECT_EQ(growth, Diff(g.total_from.committed - g.before_from.committed, g.total_to.committed - g.before_to.committed));
  // --detail: every stack, with its bytes at both ends.
  TextOptions detail;
  detail.detail = true;
  const std::string all = GrowthText(s, g, detail);
  for (size_t i = 0; i < g.stacks.size(); ++i) {
    const analysis::StackGrowth& st = g.stacks[i];
    EXPECT_THAT(all, HasSubstr(absl::StrCat("\nstack #", i + 1, ": ", Signed(st.growth()), " (",
                                            HumanBytes(st.from.mapped), " -> ", HumanBytes(st.to.mapped), "; committed ",
                                            Signed(st.committed_growth()), "); first: ")));
  }
}

TEST(GrowthJsonTest, TheContractsFieldsAndTheirSumsAtBothEnds) {
  const session::Session& s = OpenTrace("phases-fp.data");
  const analysis::Growth g = PhasesGrowth(s);
  const Json j = GrowthJson(s, g);
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"from", "to", "total", "before_trace", "stacks", "notes"}));
  EXPECT_EQ(j["from"], TimeSeconds(g.from));
  EXPECT_EQ(j["to"], TimeSeconds(s.index().stats().last_time));  // the end, as its last event's time
  const std::vector<std::string> level = {"from_bytes", "to_bytes", "growth_bytes", "from_committed_bytes",
                                          "to_committed_bytes", "growth_committed_bytes", "from_regions", "regions",
                                          "from_rss", "to_rss", "growth_rss"};
  auto check_level = [&](const Json& l, const analysis::BytesAt& from, const analysis::BytesAt& to) {
    for (const std::string& k : level) EXPECT_TRUE(l.contains(k)) << k;
    EXPECT_EQ(l["from_bytes"], from.mapped);
    EXPECT_EQ(l["to_bytes"], to.mapped);
    EXPECT_EQ(l["growth_bytes"], Diff(from.mapped, to.mapped));
    EXPECT_EQ(l["from_committed_bytes"], from.committed);
    EXPECT_EQ(l["to_committed_bytes"], to.committed);
    EXPECT_EQ(l["from_regions"], from.regions);
    EXPECT_EQ(l["regions"], to.regions);
    // No snapshots: unknown, never 0.
    EXPECT_TRUE(l["from_rss"].is_null() && l["to_rss"].is_null() && l["growth_rss"].is_null());
  };
  check_level(j["total"], g.total_from, g.total_to);
  check_level(j["before_trace"], g.before_from, g.before_to);
  ASSERT_EQ(j["stacks"].size(), g.stacks.size());
  uint64_t from = j["before_trace"]["from_bytes"], to = j["before_trace"]["to_bytes"];
  for (size_t i = 0; i < g.stacks.size(); ++i) {
    const Json& st = j["stacks"][i];
    check_level(st, g.stacks[i].from, g.stacks[i].to);
    for (const char* k : {"added_bytes", "removed_bytes", "made_gone_bytes", "calls", "kind", "origin"}) {
      EXPECT_TRUE(st.contains(k)) << k;
    }
    EXPECT_FALSE(st.contains("commit"));  // --by create
    EXPECT_EQ(st["growth_bytes"].get<int64_t>(),
              st["added_bytes"].get<int64_t>() - st["removed_bytes"].get<int64_t>());
    EXPECT_EQ(st["origin"]["time"], TimeSeconds(s.index().event(g.stacks[i].first_call).time));
    from += st["from_bytes"].get<uint64_t>();
    to += st["to_bytes"].get<uint64_t>();
  }
  EXPECT_EQ(from, j["total"]["from_bytes"].get<uint64_t>());
  EXPECT_EQ(to, j["total"]["to_bytes"].get<uint64_t>());
  EXPECT_TRUE(j["notes"].empty());
  // Committed credit names the committing call.
  const analysis::Growth by_commit = GrowthOf(s, Select(s, std::nullopt), "+0.2", "end", analysis::CreditBy::kCommit);
  const Json c = GrowthJson(s, by_commit);
  ASSERT_FALSE(c["stacks"].empty());
  EXPECT_TRUE(c["stacks"][0].contains("commit"));
  EXPECT_FALSE(c["stacks"][0].contains("origin"));
}

// `growth --json` is written a stack's object at a time (a million-stack
// recording's JSON is never held whole): byte for byte the document's dump,
// with stacks, methods, notes and an empty range alike.
TEST(GrowthJsonTest, WrittenAStackAtATimeItIsTheDocumentsDump) {
  for (const char* trace : {"phases-fp.data", "residency.data", "rules-dwarf-zstd.data"}) {
    SCOPED_TRACE(trace);
    const session::Session& s = OpenTrace(trace, /*inlines=*/false);
    for (const auto& [from, to] : {std::pair{"+0", "end"}, std::pair{"-0.01", "end"}, std::pair{"peak", "end"}, std::pair{"end", "end"}}) {
      SCOPED_TRACE(absl::StrCat(from, " to ", to));
      for (const analysis::CreditBy by : {analysis::CreditBy::kCreate, analysis::CreditBy::kCommit}) {
        const analysis::Growth g = GrowthOf(s, Select(s, std::nullopt), from, to, by);
        const std::vector<analysis::MethodGrowth> methods = analysis::GrowthByMethod(s.frames(), g, {});
        char* buf = nullptr;
        size_t size = 0;
        std::FILE* out = open_memstream(&buf, &size);
        ASSERT_NE(out, nullptr);
        EXPECT_TRUE(WriteGrowthJson(s, g, methods, out));
        std::fclose(out);
        const std::string streamed(buf, size);
        std::free(buf);
        EXPECT_EQ(streamed, DumpJson(GrowthJson(s, g, methods)) + "\n");
      }
    }
  }
}

// `growth --detail` is written a piece at a time (a million stacks' detail is
// ~500 MB of text): each piece whole lines, at least one a stack, and
// together the text GrowthText makes; a refused piece stops the writing.
TEST(GrowthTextTest, DetailIsWrittenAStackAtATime) {
  for (const char* trace : {"phases-fp.data", "residency.data"}) {
    SCOPED_TRACE(trace);
    const session::Session& s = OpenTrace(trace, /*inlines=*/false);
    const analysis::Growth g = GrowthOf(s, Select(s, std::nullopt), "+0", "end", analysis::CreditBy::kCommit);
    ASSERT_GE(g.stacks.size(), 2u);
    const std::vector<analysis::MethodGrowth> methods = analysis::GrowthByMethod(s.frames(), g, {});
    TextOptions o;
    o.detail = true;
    for (const bool by_method : {false, true}) {
      std::vector<std::string> pieces;
      EXPECT_TRUE(WriteGrowthText(s, g, by_method ? &methods : nullptr, o, [&](std::string_view p) {
        pieces.emplace_back(p);
        return true;
      }));
      EXPECT_GT(pieces.size(), 2 * g.stacks.size());  // a row, then the frames, of each
      for (const std::string& p : pieces) EXPECT_TRUE(absl::EndsWith(p, "\n")) << p;
      EXPECT_EQ(absl::StrJoin(pieces, ""), by_method ? GrowthText(s, g, methods, o) : GrowthText(s, g, o));
      size_t calls = 0;
      EXPECT_FALSE(WriteGrowthText(s, g, by_method ? &methods : nullptr, o, [&](std::string_view) { return ++calls < 3; }));
      EXPECT_EQ(calls, 3u);
    }
  }
}

// residency.data: two processes with snapshots taken at different moments.
// From a moment one of them has a snapshot for and the other not, the
// resident bytes there are unknown in every sum that holds the other's
// bytes: "?" and null, with a note naming it; at the end both are known.
TEST(GrowthRenderTest, ResidentBytesNoSnapshotSpeaksForAreQuestionMarksAndNulls) {
  const session::Session& s = OpenTrace("residency.data", /*inlines=*/false);
  const index::TraceIndex& idx = s.index();
  ASSERT_NE(s.residency(), nullptr);
  const session::Selection all = Select(s, std::nullopt);
  ASSERT_EQ(all.processes.size(), 2u);
  // The earliest snapshot of either process, while the other lives.
  std::vector<uint64_t> first;
  for (uint32_t p : all.processes) first.push_back(s.residency()->Of(idx.process(p).pid).front().time);
  const size_t early = first[0] <= first[1] ? 0 : 1;
  const uint32_t late_pid = idx.process(all.processes[1 - early]).pid;
  ASSERT_LT(first[early], first[1 - early]);
  ASSERT_LT(idx.process(all.processes[1 - early]).t_start, first[early]) << "the other is alive then";
  const analysis::Growth g = GrowthOf(s, all, FormatTime(first[early]), "end", analysis::CreditBy::kCommit);
  ASSERT_TRUE(g.snapshots);
  ASSERT_EQ(g.no_snapshot_from.size(), 1u);
  EXPECT_EQ(idx.process(g.no_snapshot_from[0]).pid, late_pid);
  EXPECT_TRUE(g.no_snapshot_to.empty());
  EXPECT_FALSE(g.total_from.rss.has_value());
  ASSERT_TRUE(g.total_to.rss.has_value());

  const Json j = GrowthJson(s, g);
  EXPECT_TRUE(j["total"]["from_rss"].is_null());
  EXPECT_EQ(j["total"]["to_rss"], *g.total_to.rss);
  EXPECT_TRUE(j["total"]["growth_rss"].is_null());
  ASSERT_EQ(j["notes"].size(), 1u);
  EXPECT_THAT(j["notes"][0].get<std::string>(),
              HasSubstr(absl::StrCat("resident bytes at --from ", FormatTime(g.from), " unknown: no residency snapshot of pid ",
                                     late_pid, " (residency) at or before it")));
  size_t unknown = 0;
  for (size_t i = 0; i < g.stacks.size(); ++i) {
    const Json& st = j["stacks"][i];
    EXPECT_EQ(st["from_rss"], g.stacks[i].from.rss ? Json(*g.stacks[i].from.rss) : Json(nullptr));
    EXPECT_EQ(st["growth_rss"].is_null(), !g.stacks[i].rss_growth().has_value());
    unknown += st["from_rss"].is_null();
  }
  EXPECT_GT(unknown, 0u);

  const std::string text = GrowthText(s, g);
  EXPECT_THAT(text, HasSubstr(absl::StrCat(", resident ? -> ", HumanBytes(*g.total_to.rss), "\n")));
  EXPECT_THAT(text, HasSubstr("\nnote: " + j["notes"][0].get<std::string>() + "\n"));
  const Table t = FirstScreen(text);
  ASSERT_FALSE(t.rows.empty());
  for (const std::vector<std::string>& row : t.rows) {
    ASSERT_EQ(row.size(), 9u) << absl::StrJoin(row, "|");  // with resident growth and now
    const analysis::StackGrowth& st = g.stacks[std::stoul(row[0]) - 1];
    const std::optional<int64_t> rss = st.rss_growth();
    EXPECT_EQ(row[3], rss ? Signed(*rss) : "?");
    EXPECT_EQ(row[4], st.to.rss ? HumanBytes(*st.to.rss) : "?");
  }
  EXPECT_EQ(t.total[2], "?");
}

}  // namespace
}  // namespace pageblame::render

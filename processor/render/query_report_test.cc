// `pageblame query` as printed: for each (address, process) answer, the text
// and the JSON name the same process, region, creating call and history,
// and both are the answer's: a live page's version, a gone page's last
// tenant, an address nobody mapped.
#include "processor/render/query_report.h"

#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/analysis/history.h"
#include "processor/base/format.h"
#include "processor/render/render_sessions_for_test.h"

namespace pageblame::render {
namespace {

using ::testing::HasSubstr;

// A version of process p gone before the end, none of whose pages any
// version of p holds at the end: an address with a history and no region.
std::optional<uint64_t> GoneAddress(const index::TraceIndex& idx, uint32_t p) {
  testing::PageSet live;
  for (VersionId v : idx.RegionsAt(p, index::kEndOfTrace)) live.Add(idx.version(v).start, idx.version(v).end);
  for (uint32_t i = 0; i < idx.num_versions(); ++i) {
    const index::Version& v = idx.version(VersionId(i));
    if (v.process != p || v.t_to == index::kEndOfTrace || !v.origin.valid()) continue;
    testing::PageSet page;
    page.Add(v.start, v.start + 4096);
    if (page.Intersect(live).empty()) return v.start;
  }
  return std::nullopt;
}

struct Asked {
  analysis::QueryOptions options;
  std::vector<analysis::QueryAnswer> answers;
};

// Addresses of rules-trace.data, as `query --history` asks them: every
// third region's start at the end in every process, one page gone by the
// end, one nobody mapped.
Asked AskRules(const session::Session& s) {
  const index::TraceIndex& idx = s.index();
  Asked q;
  q.options.Select(s, Select(s, std::nullopt));
  q.options.history = true;
  for (uint32_t p : q.options.processes) {
    const std::vector<VersionId> live = idx.RegionsAt(p, index::kEndOfTrace);
    for (size_t i = 0; i < live.size(); i += 3) q.options.addresses.push_back(idx.version(live[i]).start + 4096 - 1);
  }
  const std::optional<uint64_t> gone = GoneAddress(idx, q.options.processes[0]);
  EXPECT_TRUE(gone.has_value());
  q.options.addresses.push_back(gone.value_or(0));
  q.options.addresses.push_back(0x1000);  // below every mapping
  q.answers = analysis::Query(idx, q.options);
  return q;
}

// The text's blocks, one per answer (separated by an empty line).
std::vector<std::vector<std::string>> Blocks(const std::string& text) {
  std::vector<std::vector<std::string>> out(1);
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.empty()) {
      out.push_back({});
    } else {
      out.back().emplace_back(line);
    }
  }
  while (!out.empty() && out.back().empty()) out.pop_back();
  return out;
}

std::string Line(const std::vector<std::string>& block, const std::string& prefix) {
  for (const std::string& l : block) {
    if (absl::StartsWith(l, prefix)) return l;
  }
  return "";
}

// The text's history lines (their beginnings) for `lineage`: every entry,
// but of a run of more than three splits only the first and the last, with
// the count of the others between them.
std::vector<std::string> ShownHistory(const index::TraceIndex& idx, const std::vector<analysis::HistoryEntry>& lineage) {
  auto line = [&](const analysis::HistoryEntry& e) {
    const index::Version& v = idx.version(e.version);
    return absl::StrCat("    ", FormatTime(e.time), " pid ", idx.process(v.process).pid, " ",
                        analysis::PageChangeName(e.change), " [", Hex(v.start), "-", Hex(v.end), ")");
  };
  std::vector<std::string> out;
  for (size_t i = 0; i < lineage.size();) {
    size_t run = 0;
    while (i + run < lineage.size() && lineage[i + run].change == analysis::PageChange::kSplit) ++run;
    if (run > 3) {
      out.push_back(line(lineage[i]));
      out.push_back(absl::StrCat("    ... ", run - 2, " more splits of its region by calls on other pages"));
      out.push_back(line(lineage[i + run - 1]));
      i += run;
    } else {
      out.push_back(line(lineage[i++]));
    }
  }
  return out;
}

TEST(QueryReportTest, TextAndJsonSayTheSameRegionOriginAndHistoryAsTheAnswer) {
  const session::Session& s = OpenTrace("rules-trace.data");
  const index::TraceIndex& idx = s.index();
  const Asked q = AskRules(s);
  const Json j = QueryJson(s, q.options, q.answers);
  const auto blocks = Blocks(QueryText(s, q.options, q.answers));
  ASSERT_EQ(j.size(), q.answers.size());
  ASSERT_EQ(blocks.size(), q.answers.size());
  size_t live = 0, gone = 0, nobody = 0;
  for (size_t i = 0; i < q.answers.size(); ++i) {
    const analysis::QueryAnswer& a = q.answers[i];
    const Json& o = j[i];
    const std::vector<std::string>& b = blocks[i];
    SCOPED_TRACE(b.front());
    EXPECT_EQ(o["address"], Hex(a.address));
    EXPECT_TRUE(absl::StartsWith(b.front(), Hex(a.address)));
    if (!a.process) {
      ++nobody;
      EXPECT_TRUE(o["pid"].is_null() && o["region"].is_null() && o["origin"].is_null());
      EXPECT_EQ(b.front(), Hex(a.address) + ": not mapped in any traced process at the end of the trace");
      continue;
    }
    const index::Process& proc = idx.process(*a.process);
    EXPECT_EQ(o["pid"], proc.pid);
    EXPECT_THAT(b.front(), HasSubstr(absl::StrCat(" in pid ", proc.pid, " (rules) at the end of the trace")));
    // The history: as many entries in both, the same changes and ranges.
    ASSERT_EQ(o["history"].size(), a.lineage.size());
    const size_t first_entry = std::find(b.begin(), b.end(), "  history of this page:") - b.begin() + 1;
    const std::vector<std::string> shown = ShownHistory(idx, a.lineage);
    ASSERT_LE(first_entry + shown.size(), b.size());
    for (size_t h = 0; h < a.lineage.size(); ++h) {
      const analysis::HistoryEntry& e = a.lineage[h];
      const index::Version& v = idx.version(e.version);
      EXPECT_EQ(o["history"][h]["change"], std::string(analysis::PageChangeName(e.change)));
      EXPECT_EQ(o["history"][h]["region"]["start"], Hex(v.start));
    }
    for (size_t h = 0; h < shown.size(); ++h) {
      EXPECT_TRUE(absl::StartsWith(b[first_entry + h], shown[h])) << b[first_entry + h];
    }
    if (!a.version.valid()) {
      // Gone by the end: its last tenant, and how it went, in both.
      ++gone;
      ASSERT_FALSE(a.lineage.empty());
      EXPECT_TRUE(o["region"].is_null() && o["origin"].is_null());
      // The JSON's last entry, said in the text's words.
      const Json& last = o["history"].back();
      const index::CallEvent& by = idx.event(a.lineage.back().event);
      EXPECT_EQ(Line(b, "  not mapped; it was in ["),
                absl::StrCat("  not mapped; it was in [", last["region"]["start"].get<std::string>(), "-",
                             last["region"]["end"].get<std::string>(), ") until ",
                             absl::StrFormat("%.6f", last["time"].get<double>()), ", ",
                             last["change"].get<std::string>(), " by ", last["call"].get<std::string>(), " at ",
                             FormatTime(by.time), " by ", last["comm"].get<std::string>(), " ", proc.pid, "/",
                             last["tid"].get<uint32_t>()));
      continue;
    }
    ++live;
    const index::Version& v = idx.version(a.version);
    EXPECT_EQ(o["region"], Json({{"start", Hex(v.start)}, {"end", Hex(v.end)}}));
    EXPECT_TRUE(absl::StartsWith(Line(b, "  region "),
                                 absl::StrCat("  region ", o["region"]["start"].get<std::string>(), "-",
                                              o["region"]["end"].get<std::string>(), " ")));
    EXPECT_LE(v.start, a.address);
    EXPECT_LT(a.address, v.end);
    if (v.origin.valid()) {
      const Json& origin = o["origin"];
      EXPECT_EQ(origin["syscall"], std::string(decode::SyscallName(idx.event(v.origin).syscall)));
      EXPECT_TRUE(absl::StartsWith(Line(b, "  created by "), "  created by " + origin["syscall"].get<std::string>() + "("));
      EXPECT_EQ(Line(b, "  at "), absl::StrCat("  at ", absl::StrFormat("%.6f", origin["time"].get<double>()), " by ",
                                               origin["comm"].get<std::string>(), " ", origin["pid"].get<uint32_t>(),
                                               "/", origin["tid"].get<uint32_t>()));
    } else {
      EXPECT_TRUE(o["origin"].is_null());
      EXPECT_THAT(Line(b, "  existed before the trace"), HasSubstr("(mapped by the kernel at exec)"));
    }
    EXPECT_EQ(o["commit"].is_null(), !v.commit.valid());
    EXPECT_EQ(Line(b, "  committed by ").empty(), !v.commit.valid());
  }
  EXPECT_GT(live, 10u);
  EXPECT_EQ(gone, 1u);
  EXPECT_EQ(nobody, 1u);
}

// Without --history the text has none, and says how to see it for a page
// gone by then; the JSON always has it.
TEST(QueryReportTest, HistoryIsInTheTextOnlyWhenAskedFor) {
  const session::Session& s = OpenTrace("rules-trace.data");
  Asked q = AskRules(s);
  q.options.history = false;
  const std::string text = QueryText(s, q.options, q.answers);
  EXPECT_THAT(text, ::testing::Not(HasSubstr("history of this page")));
  EXPECT_THAT(text, HasSubstr("  (--history for the whole story of the page)"));
  const Json j = QueryJson(s, q.options, q.answers);
  for (size_t i = 0; i < q.answers.size(); ++i) EXPECT_EQ(j[i]["history"].size(), q.answers[i].lineage.size());
}

// residency.data: each answer's resident state, in text and JSON alike.
TEST(QueryReportTest, ResidencyIsSaidAlikeWhereASnapshotReadThePage) {
  const session::Session& s = OpenTrace("residency.data", /*inlines=*/false);
  const index::TraceIndex& idx = s.index();
  analysis::QueryOptions o;
  o.Select(s, Select(s, std::nullopt));
  for (uint32_t p : o.processes) {
    for (VersionId v : idx.RegionsAt(p, index::kEndOfTrace)) o.addresses.push_back(idx.version(v).start);
  }
  const std::vector<analysis::QueryAnswer> answers = analysis::Query(idx, o);
  const Json j = QueryJson(s, o, answers);
  const auto blocks = Blocks(QueryText(s, o, answers));
  ASSERT_EQ(blocks.size(), answers.size());
  size_t read = 0;
  for (size_t i = 0; i < answers.size(); ++i) {
    const analysis::QueryAnswer& a = answers[i];
    SCOPED_TRACE(blocks[i].front());
    if (!a.page_state) {
      EXPECT_TRUE(j[i]["resident"].is_null());
      EXPECT_FALSE(Line(blocks[i], "  residency unknown: ").empty());
      continue;
    }
    ++read;
    EXPECT_EQ(j[i]["resident"]["state"], *a.page_state);
    EXPECT_EQ(j[i]["resident"]["snapshot_time"], TimeSeconds(a.snapshot->time));
    EXPECT_EQ(j[i]["resident"]["region_rss"], a.region_rss ? Json(*a.region_rss) : Json(nullptr));
    EXPECT_EQ(Line(blocks[i], "  " + *a.page_state + " (snapshot at "),
              absl::StrCat("  ", *a.page_state, " (snapshot at ", FormatTime(a.snapshot->time), "; ",
                           a.region_rss ? HumanBytes(*a.region_rss) : "?", " of the region resident)"));
  }
  EXPECT_GT(read, 10u);
}

// A .NET GC page: its reservation was cut by hundreds of commits of other
// pages. The text shows the page's own changes, each, and of the splits
// the first, the last and how many between; the JSON lists every one.
TEST(QueryReportTest, ALongRunOfSplitsIsCountedInTheTextAndListedInTheJson) {
  const session::Session& s = OpenTrace("dotnet/dotnet-leak.data", /*inlines=*/false);
  const index::TraceIndex& idx = s.index();
  analysis::QueryOptions o;
  o.Select(s, Select(s, std::nullopt));
  o.history = true;
  // The live page whose history has the most splits.
  size_t most = 0;
  for (uint32_t p : o.processes) {
    for (VersionId v : idx.RegionsAt(p, index::kEndOfTrace)) {
      analysis::QueryOptions one = o;
      one.addresses = {idx.version(v).start};
      const std::vector<analysis::QueryAnswer> a = analysis::Query(idx, one);
      const size_t splits = a.empty() ? 0 : std::count_if(a[0].lineage.begin(), a[0].lineage.end(), [](const auto& e) {
        return e.change == analysis::PageChange::kSplit;
      });
      if (splits > most) {
        most = splits;
        o.addresses = one.addresses;
      }
    }
  }
  ASSERT_GT(most, 100u) << "no page of the GC's reservation";
  const std::vector<analysis::QueryAnswer> answers = analysis::Query(idx, o);
  ASSERT_EQ(answers.size(), 1u);
  const std::string text = QueryText(s, o, answers);
  const std::vector<std::string> lines = absl::StrSplit(text, '\n');
  const size_t first = std::find(lines.begin(), lines.end(), "  history of this page:") - lines.begin() + 1;
  const std::vector<std::string> shown = ShownHistory(idx, answers[0].lineage);
  ASSERT_EQ(lines.size(), first + shown.size() + 1) << text;  // the text ends with a newline
  for (size_t h = 0; h < shown.size(); ++h) EXPECT_TRUE(absl::StartsWith(lines[first + h], shown[h])) << lines[first + h];
  EXPECT_LT(shown.size(), 30u);
  EXPECT_EQ(QueryJson(s, o, answers)[0]["history"].size(), answers[0].lineage.size());
}

// `query --json` is written an answer at a time; the text is the whole
// document's, byte for byte: live, gone and unmapped answers, and none.
TEST(QueryReportTest, JsonWrittenAnAnswerAtATimeIsTheDocumentsDump) {
  const session::Session& s = OpenTrace("rules-trace.data");
  Asked q = AskRules(s);
  ASSERT_GT(q.answers.size(), 3u);
  for (size_t n : {q.answers.size(), size_t{1}, size_t{0}}) {
    SCOPED_TRACE(n);
    const std::vector<analysis::QueryAnswer> answers(q.answers.begin(), q.answers.begin() + n);
    char* buf = nullptr;
    size_t size = 0;
    std::FILE* out = open_memstream(&buf, &size);
    ASSERT_NE(out, nullptr);
    EXPECT_TRUE(WriteQueryJson(s, q.options, answers, out));
    std::fclose(out);
    const std::string streamed(buf, size);
    std::free(buf);
    EXPECT_EQ(streamed, DumpJson(QueryJson(s, q.options, answers)) + "\n");
  }
}

}  // namespace
}  // namespace pageblame::render

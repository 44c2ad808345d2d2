// How the trace commands read their options, without a trace: the argument
// parser, the session a command opens (-i, --symfs, -f, --rss, ...), the
// selection (--pid, --at) and the answer's format (--format, --json), and
// which mistakes are usage errors (exit 2) naming the option.
#include <unistd.h>

#include <regex>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/usage_error.h"
#include "processor/cli/args.h"
#include "processor/cli/format_option.h"
#include "processor/cli/trace_options.h"

namespace pageblame::cli {
namespace {

using ::testing::HasSubstr;

Args Parse(const std::vector<std::string>& argv) {
  absl::StatusOr<Args> a = Args::Parse(argv, kTraceAliases, {"--input", "--pid", "--at", "--symfs", "--perf-map-dir",
                                                             "--buildid-dir", "--rss", "--format", "--output"},
                                       kTraceBoolFlags);
  EXPECT_TRUE(a.ok()) << a.status();
  return a.ok() ? *a : Args();
}

TEST(ArgsTest, ValuesAliasesAndPositionals) {
  Args a = Parse({"-i", "t.data", "--pid=42", "0x1000", "-f", "--", "--not-a-flag"});
  EXPECT_EQ(a.Value("--input"), "t.data");
  EXPECT_EQ(a.Value("--pid"), "42");
  EXPECT_TRUE(a.Has("--force"));
  EXPECT_FALSE(a.Has("--json"));
  EXPECT_THAT(a.positional(), ::testing::ElementsAre("0x1000", "--not-a-flag"));
  // What an output file must not be: every value and positional but its own.
  EXPECT_THAT(a.ValuesExcept("--pid"), ::testing::UnorderedElementsAre("t.data", "0x1000", "--not-a-flag"));
}

TEST(ArgsTest, AnUnknownFlagOrAMissingValueIsAnError) {
  EXPECT_FALSE(Args::Parse({"--histroy"}, {}, {}, {"--history"}).ok());
  EXPECT_FALSE(Args::Parse({"--pid"}, {}, {"--pid"}, {}).ok());
}

TEST(SessionOptionsTest, EveryTraceFlagReachesTheSession) {
  absl::StatusOr<session::SessionOptions> o =
      SessionOptionsFromArgs(Parse({"-i", "app.data", "--symfs", "/sysroot", "--perf-map-dir", "/maps",
                                    "--buildid-dir", "/cache", "--no-inline", "-f", "--rss", "app.rss"}),
                             /*rss_required=*/true);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->path, "app.data");
  EXPECT_EQ(o->symbols.symfs, "/sysroot");
  EXPECT_EQ(o->symbols.perf_map_dir, "/maps");
  EXPECT_EQ(o->symbols.debug_dir, "/cache");
  EXPECT_FALSE(o->symbols.inline_frames);
  EXPECT_TRUE(o->force);
  EXPECT_EQ(o->residency.path, "app.rss");
  EXPECT_TRUE(o->residency.required);
  EXPECT_FALSE(o->residency.off);
  // Nothing named: perf's default trace, snapshots beside it if any.
  absl::StatusOr<session::SessionOptions> d = SessionOptionsFromArgs(Parse({}), false);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->path, session::kDefaultTracePath);
  EXPECT_EQ(InputPath(Parse({})), "perf.data");
  EXPECT_FALSE(d->residency.path.has_value());
  EXPECT_FALSE(d->force);
}

TEST(SessionOptionsTest, NoRssContradictingAnAnswerInResidentBytesIsAUsageError) {
  absl::StatusOr<session::SessionOptions> named = SessionOptionsFromArgs(Parse({"--no-rss", "--rss", "x"}), false);
  ASSERT_FALSE(named.ok());
  EXPECT_TRUE(IsUsage(named.status()));
  EXPECT_EQ(named.status().message(), "--no-rss contradicts --rss");
  absl::StatusOr<session::SessionOptions> needed = SessionOptionsFromArgs(Parse({"--no-rss"}), true);
  ASSERT_FALSE(needed.ok());
  EXPECT_THAT(needed.status().message(), HasSubstr("contradicts an answer in resident bytes"));
  EXPECT_TRUE(SessionOptionsFromArgs(Parse({"--no-rss"}), false)->residency.off);
}

TEST(SelectionOptionsTest, PidAndMomentAreParsedBeforeTheTraceIsRead) {
  absl::StatusOr<SelectionRequest> s = ParseSelection(Parse({"--pid", "42", "--at", "+1.5"}));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->pid, 42u);
  EXPECT_EQ(s->at.kind, session::TimeSpec::Kind::kFromStart);
  EXPECT_EQ(s->at.ns, 1500000000u);
  EXPECT_EQ(ParseSelection(Parse({}))->at.kind, session::TimeSpec::Kind::kEnd);
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"--pid", "x42"},
                                              std::vector<std::string>{"--at", "yesterday"}}) {
    absl::StatusOr<SelectionRequest> r = ParseSelection(Parse(bad));
    ASSERT_FALSE(r.ok()) << bad[1];
    EXPECT_TRUE(IsUsage(r.status()));
    EXPECT_THAT(r.status().message(), HasSubstr("bad " + bad[0] + " '" + bad[1] + "'"));
  }
}

TEST(FormatOptionTest, OneFormOfTheAnswerChosenOneWay) {
  const std::vector<AnswerFormat> all = {AnswerFormat::kText, AnswerFormat::kJson, AnswerFormat::kFolded,
                                         AnswerFormat::kPprof};
  EXPECT_EQ(*ParseFormat(Parse({}), all), AnswerFormat::kText);
  EXPECT_EQ(*ParseFormat(Parse({"--json"}), all), AnswerFormat::kJson);
  EXPECT_EQ(*ParseFormat(Parse({"--format", "folded"}), all), AnswerFormat::kFolded);
  EXPECT_EQ(*ParseFormat(Parse({"--format", "pprof", "--output", "x.pb.gz"}), all), AnswerFormat::kPprof);
  absl::StatusOr<AnswerFormat> bad =
      ParseFormat(Parse({"--format", "csv"}), {AnswerFormat::kText, AnswerFormat::kJson, AnswerFormat::kPprof});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(IsUsage(bad.status()));
  EXPECT_EQ(bad.status().message(), "bad --format 'csv': expected text, json or pprof");
  // A form another command has is still not this one's.
  EXPECT_FALSE(ParseFormat(Parse({"--format", "folded"}), {AnswerFormat::kText, AnswerFormat::kJson}).ok());
  absl::StatusOr<AnswerFormat> both = ParseFormat(Parse({"--json", "--format", "text"}), all);
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.status().message(), "--json contradicts --format text");
  EXPECT_TRUE(IsText(AnswerFormat::kFolded));
  EXPECT_FALSE(IsText(AnswerFormat::kPprof));
}

TEST(SummaryOptionsTest, FramesAndHideAreParsedAndABadPatternIsAUsageError) {
  const Args all;
  absl::StatusOr<Args> a = Args::Parse({"--frames", "all", "--hide", "Program::Main|Wrapper"}, {},
                                       {"--frames", "--hide"}, {});
  ASSERT_TRUE(a.ok());
  absl::StatusOr<analysis::SummaryOptions> o = ParseFrames(*a);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->style, analysis::SummaryStyle::kAll);
  ASSERT_NE(o->hide, nullptr);
  EXPECT_TRUE(std::regex_search("Program::Main", *o->hide));
  EXPECT_FALSE(std::regex_search("Program::Other", *o->hide));
  EXPECT_EQ(ParseFrames(all)->style, analysis::SummaryStyle::kApp);  // the default
  EXPECT_EQ(ParseFrames(all)->hide, nullptr);
  absl::StatusOr<Args> bad = Args::Parse({"--hide", "(unclosed"}, {}, {"--hide"}, {});
  absl::StatusOr<analysis::SummaryOptions> b = ParseFrames(*bad);
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(IsUsage(b.status()));
  EXPECT_THAT(b.status().message(), HasSubstr("bad --hide '(unclosed': "));
}

// docs/cli.md: `--kind K[,K]`, "thread-stack" or "thread stack".
TEST(KindOptionTest, KindsByNameWithDashOrSpaceOnceEach) {
  auto kinds = [](const std::string& list) {
    absl::StatusOr<Args> a = Args::Parse({"--kind", list}, {}, {"--kind"}, {});
    return ParseKindFilter(*a);
  };
  absl::StatusOr<std::vector<analysis::RegionKind>> k = kinds("thread-stack,malloc,thread stack,gc_heap");
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_THAT(*k, ::testing::ElementsAre(analysis::RegionKind::kThreadStack, analysis::RegionKind::kMalloc,
                                         analysis::RegionKind::kGcHeap));
  EXPECT_TRUE(ParseKindFilter(Args())->empty());  // no --kind: every kind
  absl::StatusOr<std::vector<analysis::RegionKind>> bad = kinds("malloc,stack");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(IsUsage(bad.status()));
  // The message lists what is accepted.
  EXPECT_THAT(bad.status().message(), HasSubstr("bad --kind: unknown kind 'stack': expected thread stack, malloc"));
}

TEST(SortOptionTest, RankingIsTheOneAskedElseResidentWithSnapshotsElseCommitted) {
  for (const auto& [name, by] : {std::make_pair("rss", analysis::RankBy::kResident),
                                 std::make_pair("committed", analysis::RankBy::kCommitted),
                                 std::make_pair("mapped", analysis::RankBy::kMapped)}) {
    absl::StatusOr<Args> a = Args::Parse({"--sort", name}, {}, {"--sort"}, {});
    EXPECT_EQ(*ParseSort(*a), by) << name;
    EXPECT_EQ(Ranking(by, nullptr), by);
  }
  EXPECT_EQ(*ParseSort(Args()), std::nullopt);
  EXPECT_EQ(Ranking(std::nullopt, nullptr), analysis::RankBy::kCommitted);
  absl::StatusOr<Args> bad = Args::Parse({"--sort", "size"}, {}, {"--sort"}, {});
  ASSERT_FALSE(ParseSort(*bad).ok());
  EXPECT_TRUE(IsUsage(ParseSort(*bad).status()));
}

}  // namespace
}  // namespace pageblame::cli

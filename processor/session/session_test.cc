// session/: the times a user gives, which processes a pid names, and what
// a load warns about, decided once for the CLI and the plugin.
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/temp_dir_for_test.h"
#include "processor/base/usage_error.h"
#include "processor/session/selection.h"
#include "processor/session/session.h"
#include "processor/session/time_spec.h"

namespace pageblame::session {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const Session& Load(const std::string& name) {
  static auto* cache = new std::map<std::string, std::unique_ptr<Session>>();
  auto& t = (*cache)[name];
  if (!t) {
    SessionOptions o;
    o.path = std::string(PAGEBLAME_SOURCE_DIR) + "/traces/" + name;
    o.symbols.debug_dir = std::string(PAGEBLAME_SOURCE_DIR) + "/traces/buildid-cache";
    auto loaded = Session::Open(o);
    EXPECT_TRUE(loaded.ok()) << loaded.status();
    t = *std::move(loaded);
  }
  return *t;
}

TEST(TimeSpecTest, PerfSecondsMeanTheirMicrosecond) {
  auto t = ParseTimeSpec("2397.074");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->kind, TimeSpec::Kind::kAbsolute);
  // Not 2397.074999...: the instant typed, to the end of its µs.
  EXPECT_EQ(t->ns, 2397074000999u);
  EXPECT_EQ(ParseTimeSpec("2397.074152")->ns, 2397074152999u);
  EXPECT_EQ(ParseTimeSpec("2397.074152123")->ns, 2397074152123u);
  EXPECT_EQ(ParseTimeSpec("12")->ns, 12000000999u);
}

TEST(TimeSpecTest, RelativeEndAndPeak) {
  EXPECT_EQ(ParseTimeSpec("+1.5")->kind, TimeSpec::Kind::kFromStart);
  EXPECT_EQ(ParseTimeSpec("+1.5")->ns, 1500000000u);
  EXPECT_EQ(ParseTimeSpec("-0.25")->kind, TimeSpec::Kind::kBeforeEnd);
  EXPECT_EQ(ParseTimeSpec("-0.25")->ns, 250000000u);
  EXPECT_EQ(ParseTimeSpec("end")->kind, TimeSpec::Kind::kEnd);
  EXPECT_EQ(ParseTimeSpec("peak")->kind, TimeSpec::Kind::kPeak);
}

TEST(TimeSpecTest, MalformedOrUnrepresentableTimesAreUsageErrors) {
  for (const char* bad : {"", "abc", "1.2.3", "1.", ".5", "1.1234567890", "+", "-x", "1e3", "18446744074",
                          "99999999999999999999"}) {
    auto t = ParseTimeSpec(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_TRUE(IsUsage(t.status())) << bad;
  }
  // The message quotes the argument as typed, sign and all.
  for (const std::string bad : {"-1e300", "+-1", "-99999999999999999999"}) {
    auto t = ParseTimeSpec(bad, "--at");
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_THAT(t.status().message(), HasSubstr("bad --at '" + bad + "'"));
  }
}

TEST(TimeSpecTest, TimesOutsideTheTraceNameItsSpan) {
  index::TraceIndex idx;
  idx.mutable_stats().first_time = 100000000000;  // 100 s
  idx.mutable_stats().last_time = 102500000000;   // 102.5 s
  auto peak = [] { return uint64_t{101}; };
  EXPECT_EQ(*ResolveTime(*ParseTimeSpec("+1"), idx, peak), 101000000000u);
  EXPECT_EQ(*ResolveTime(*ParseTimeSpec("-0.5"), idx, peak), 102000000000u);
  EXPECT_EQ(*ResolveTime(*ParseTimeSpec("102.5"), idx, peak), 102500000999u);
  EXPECT_EQ(*ResolveTime(*ParseTimeSpec("peak"), idx, peak), 101u);
  EXPECT_EQ(*ResolveTime(*ParseTimeSpec("end"), idx, peak), index::kEndOfTrace);
  for (const char* outside : {"5", "99999", "+3", "-3"}) {
    auto t = ResolveTime(*ParseTimeSpec(outside), idx, peak);
    ASSERT_FALSE(t.ok()) << outside;
    EXPECT_TRUE(IsUsage(t.status()));
    EXPECT_THAT(t.status().message(), HasSubstr("100.000000 to 102.500000")) << outside;
  }
}

// An idle service still recorded: a snapshot at 110 s, 7.5 s after the
// last memory call, makes 110 a time of the recording ("-S" still counts
// from the last call).
TEST(TimeSpecTest, ARecordingThatRanOnAfterItsLastCallReachesFurther) {
  index::TraceIndex idx;
  idx.mutable_stats().first_time = 100000000000;
  idx.mutable_stats().last_time = 102500000000;
  auto peak = [] { return uint64_t{101}; };
  const uint64_t reached = 110000000000;
  EXPECT_EQ(*ResolveTime(*ParseTimeSpec("110"), idx, peak, reached), 110000000999u);
  EXPECT_EQ(*ResolveTime(*ParseTimeSpec("+9"), idx, peak, reached), 109000000000u);
  EXPECT_EQ(*ResolveTime(*ParseTimeSpec("-0.5"), idx, peak, reached), 102000000000u);
  EXPECT_FALSE(ResolveTime(*ParseTimeSpec("110"), idx, peak).ok());
  auto t = ResolveTime(*ParseTimeSpec("110.5"), idx, peak, reached);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("100.000000 to 110.000000"));
}

// A recording record --max-size thinned keeps no whole state before its
// cut: a moment there (a peak included) is a usage error that says where
// the kept history begins, never an answer from what is left.
TEST(TimeSpecTest, TimesBeforeAThinnedRecordingsCutAreRefused) {
  index::TraceIndex idx;
  idx.mutable_stats().first_time = 100000000000;  // 100 s
  idx.mutable_stats().last_time = 102500000000;   // 102.5 s
  idx.mutable_stats().thinned_before = 101000000000;
  idx.mutable_stats().thinned_calls = 1234;
  uint64_t peak_at = 100500000000;
  auto peak = [&] { return peak_at; };
  EXPECT_EQ(*ResolveTime(*ParseTimeSpec("+1"), idx, peak), 101000000000u);
  EXPECT_EQ(*ResolveTime(*ParseTimeSpec("-0.5"), idx, peak), 102000000000u);
  EXPECT_EQ(*ResolveTime(*ParseTimeSpec("end"), idx, peak), index::kEndOfTrace);
  for (const char* before : {"+0.5", "100.9", "-2", "peak"}) {
    auto t = ResolveTime(*ParseTimeSpec(before), idx, peak);
    ASSERT_FALSE(t.ok()) << before;
    EXPECT_TRUE(IsUsage(t.status()));
    EXPECT_THAT(t.status().message(), HasSubstr("is before 101.000000, where record --max-size thinned"));
    EXPECT_THAT(t.status().message(), HasSubstr("1234 calls"));
  }
  peak_at = 102000000000;
  EXPECT_EQ(*ResolveTime(*ParseTimeSpec("peak"), idx, peak), 102000000000u);
}

TEST(SelectionTest, APidNamesItsEntriesAndNoPidNamesAllByPid) {
  const index::TraceIndex& idx = Load("rules-trace.data").index();
  const std::vector<uint32_t> all = ProcessesOf(idx, std::nullopt);
  ASSERT_EQ(all.size(), idx.num_processes());
  for (size_t i = 1; i < all.size(); ++i) EXPECT_LE(idx.process(all[i - 1]).pid, idx.process(all[i]).pid);
  const std::vector<uint32_t> one = ProcessesOf(idx, 10985);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(idx.process(one[0]).pid, 10985u);
  EXPECT_THAT(ProcessesOf(idx, 1), ::testing::IsEmpty());
}

TEST(SelectionTest, APidNotInTheTraceIsAUsageErrorNamingItsPids) {
  const Session& t = Load("rules-trace.data");
  EXPECT_TRUE(CheckPid(t.index(), std::nullopt).ok());
  EXPECT_TRUE(CheckPid(t.index(), 10981).ok());
  absl::StatusOr<Selection> s = Resolve({1, TimeSpec{}}, t, PeakOf::kMapped);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(IsUsage(s.status()));
  EXPECT_EQ(s.status().message(), "no process with pid 1 in the trace (its pids: 10981, 10985, 10986)");
}

TEST(SelectionTest, PeakIsTheSelectedProcessesMostBytes) {
  const Session& t = Load("commit-trace.data");
  absl::StatusOr<Selection> mapped = Resolve({std::nullopt, *ParseTimeSpec("peak")}, t, PeakOf::kMapped);
  absl::StatusOr<Selection> committed = Resolve({std::nullopt, *ParseTimeSpec("peak")}, t, PeakOf::kCommitted);
  ASSERT_TRUE(mapped.ok() && committed.ok());
  EXPECT_GE(mapped->at, t.index().stats().first_time);
  EXPECT_LE(mapped->at, t.index().stats().last_time);
  // commit.c reserves 64 MiB PROT_NONE first and commits pieces later: the
  // most committed comes after the most mapped began.
  EXPECT_NE(mapped->at, committed->at);
  EXPECT_EQ(*ResolveMoment(*ParseTimeSpec("peak"), t.index(), mapped->processes, PeakOf::kMapped), mapped->at);
}

// teardown.data: a program that unmaps its memory before it exits.
TEST(SelectionTest, AProcessThatToreDownItsMemorySaysHowToSeeIt) {
  const Session& t = Load("teardown.data");
  absl::StatusOr<Selection> end = Resolve({std::nullopt, TimeSpec{}}, t, PeakOf::kMapped);
  ASSERT_TRUE(end.ok()) << end.status();
  ASSERT_EQ(end->notes.size(), 1u);
  EXPECT_THAT(end->notes[0], HasSubstr("--at peak"));
  // Asked at another moment than the end: nothing to say.
  absl::StatusOr<Selection> peak = Resolve({std::nullopt, *ParseTimeSpec("peak")}, t, PeakOf::kMapped);
  ASSERT_TRUE(peak.ok());
  EXPECT_THAT(peak->notes, ::testing::IsEmpty());
}

TEST(LoadWarningsTest, LostEventsAndLibcCutStacksAreSaid) {
  bool lost = false;
  for (const std::string& w : Load("rules-lost.data").warnings()) lost |= absl::StrContains(w, "lost between");
  EXPECT_TRUE(lost);
  std::vector<std::string> fp = Load("alloc-fp.data").warnings();
  ASSERT_FALSE(fp.empty());
  EXPECT_TRUE(absl::StartsWith(fp.back(), "note: ")) << fp.back();
  EXPECT_THAT(fp.back(), HasSubstr("stop inside libc"));
  // A clean DWARF trace: nothing to say.
  EXPECT_THAT(Load("alloc-dwarf.data").warnings(), ::testing::IsEmpty());
}

// A copy of a real trace whose stored format of sys_enter_madvise lost its
// `behavior` field (renamed in place, offsets kept), loaded.
std::unique_ptr<Session> LoadWithoutMadviseBehavior(const std::string& name, const TempDir& dir) {
  std::ifstream in(std::string(PAGEBLAME_SOURCE_DIR) + "/traces/" + name, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t format = bytes.find("name: sys_enter_madvise\n");
  const size_t field = format == std::string::npos ? format : bytes.find("int behavior;", format);
  EXPECT_NE(field, std::string::npos) << name;
  if (field == std::string::npos) return nullptr;
  bytes.replace(field, 13, "int behaviox;");
  SessionOptions o;
  o.path = dir.path() + "/" + name;
  std::ofstream(o.path, std::ios::binary) << bytes;
  auto loaded = Session::Open(o);
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  return loaded.ok() ? *std::move(loaded) : nullptr;
}

TEST(LoadWarningsTest, AFormatLackingAFieldIsSaidWithTheCallsItLoses) {
  TempDir dir("pb_session");
  const std::string said =
      "warning: the format of syscalls:sys_enter_madvise has no field `behavior`: madvise calls are not replayed";
  // Recorded with syscalls:* events only: madvise's calls are lost, the
  // other six replayed.
  std::unique_ptr<Session> fp = LoadWithoutMadviseBehavior("alloc-fp.data", dir);
  ASSERT_NE(fp, nullptr);
  EXPECT_THAT(fp->warnings(), ::testing::Contains(said));
  EXPECT_GT(fp->index().stats().calls, 0u);
  EXPECT_LT(fp->index().stats().calls, Load("alloc-fp.data").index().stats().calls);
  // With raw_syscalls beside them, madvise is replayed from those: nothing lost, nothing said.
  std::unique_ptr<Session> both = LoadWithoutMadviseBehavior("commit-trace.data", dir);
  ASSERT_NE(both, nullptr);
  EXPECT_THAT(both->warnings(), ::testing::Not(::testing::Contains(said)));
  EXPECT_THAT(both->sources(), HasSubstr("madvise: raw_syscalls"));
}

}  // namespace
}  // namespace pageblame::session

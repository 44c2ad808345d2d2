// The moment asked about, and the page that is gone, as a newcomer meets them
// on real traces: traces/teardown.data (recorded by `pageblame record`) is a
// program that unmaps its memory before it exits and wrote its maps at its
// peak and at its end; rules-trace.data is the replay-rules program.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli_runner.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

const std::string kSym = " --buildid-dir " + SourceDir() + "/traces/buildid-cache";

struct Teardown {
  std::string trace, pid, peak_maps, end_maps, exe;  // exe as recorded
};

Teardown TeardownTrace() {
  for (const ManifestRow& row : ReadManifest()) {
    if (row["trace"] != "teardown.data") continue;
    const std::string maps = TracePath(row["maps"]);
    return Teardown{TracePath(row["trace"]), row["pid"],
                    maps.substr(0, maps.size() - 5) + ".peak.maps", maps, row["exe"]};
  }
  ADD_FAILURE() << "teardown.data is not in the manifest";
  return {};
}

uint64_t Hex(const Json& j) { return std::stoull(j.get<std::string>(), nullptr, 16); }

// Pages of a `maps --json` answer that have a creating call.
PageSet CreatedPages(const Json& regions) {
  PageSet out;
  for (const Json& r : regions) {
    if (!r["origin"].is_null()) out.Add(Hex(r["start"]), Hex(r["end"]));
  }
  return out;
}

TEST(MomentCliTest, AtPeakFindsTheWorkingSetAndTheEndSaysSo) {
  const Teardown t = TeardownTrace();
  CliRun end = Pageblame("maps -i " + t.trace + kSym);
  ASSERT_EQ(end.exit_code, 0) << end.err;
  EXPECT_THAT(end.err, HasSubstr("exited holding"));
  EXPECT_THAT(end.err, HasSubstr("--pid " + t.pid + " --at peak"));
  CliRun peak = Pageblame("maps --json -i " + t.trace + " --pid " + t.pid + " --at peak" + kSym);
  ASSERT_EQ(peak.exit_code, 0) << peak.err;
  const PageSet expected = ProcessMadePages(ReadMapsFile(t.peak_maps), t.exe);
  const PageSet created = CreatedPages(Json::parse(peak.out));
  EXPECT_GT(expected.Bytes(), 78u << 20);  // 1 + 2 + ... + 12 MiB and the heap
  EXPECT_TRUE(created == expected) << "created but not in the peak maps:" << created.Minus(expected).Describe()
                                   << "\nin the peak maps but not created:" << expected.Minus(created).Describe();
}

TEST(MomentCliTest, AtIsTheTimeTypedEvenBetweenEventsMicrosecondsApart) {
  const Teardown t = TeardownTrace();
  // two_quick_maps: a 3-page and a 5-page mmap, back to back.
  CliRun all = Pageblame("maps --json -i " + t.trace + " --pid " + t.pid + " --at peak" + kSym);
  ASSERT_EQ(all.exit_code, 0) << all.err;
  double three = 0, five = 0;
  for (const Json& r : Json::parse(all.out)) {
    if (r["origin"].is_null()) continue;
    const uint64_t size = Hex(r["end"]) - Hex(r["start"]);
    const bool quick = r["origin"]["stack"][0]["symbol"] == "two_quick_maps";
    if (quick && size == 3 * 4096) three = r["origin"]["time"].get<double>();
    if (quick && size == 5 * 4096) five = r["origin"]["time"].get<double>();
  }
  ASSERT_GT(three, 0);
  ASSERT_GT(five, three);
  ASSERT_LT(five - three, 0.001) << "not microseconds apart";
  // The first one's time as perf script prints it (µs): everything printed
  // at or before it, so the first is there and the second, printed later,
  // not yet (the old reading, to the end of the last digit typed, as
  // 2397.074 -> 2397.074999, took in both).
  ASSERT_GE(five - three, 1.5e-6) << "printed in the same microsecond";
  const std::string between = absl::StrFormat("%.6f", three);
  CliRun mid = Pageblame("maps --json -i " + t.trace + " --pid " + t.pid + " --at " + between + kSym);
  ASSERT_EQ(mid.exit_code, 0) << mid.err;
  int threes = 0, fives = 0;
  for (const Json& r : Json::parse(mid.out)) {
    if (r["origin"].is_null()) continue;
    threes += r["origin"]["time"].get<double>() == three;
    fives += r["origin"]["time"].get<double>() == five;
  }
  EXPECT_EQ(threes, 1) << between;
  EXPECT_EQ(fives, 0) << between;
}

TEST(MomentCliTest, ThePageThatIsGoneAnswersWithItsLastTenant) {
  const Teardown t = TeardownTrace();
  // A region build_working_set made and tear_down unmapped.
  CliRun peak = Pageblame("maps --json -i " + t.trace + " --pid " + t.pid + " --at peak" + kSym);
  ASSERT_EQ(peak.exit_code, 0) << peak.err;
  std::string page;
  for (const Json& r : Json::parse(peak.out)) {
    if (!r["origin"].is_null() && Hex(r["end"]) - Hex(r["start"]) == (12u << 20)) page = r["start"];
  }
  ASSERT_FALSE(page.empty());
  CliRun q = Pageblame("query --json -i " + t.trace + " " + page + kSym);  // no --pid
  ASSERT_EQ(q.exit_code, 0) << q.err;
  Json j = Json::parse(q.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(std::to_string(j[0]["pid"].get<uint32_t>()), t.pid);
  EXPECT_TRUE(j[0]["region"].is_null());
  ASSERT_GE(j[0]["history"].size(), 2u);
  EXPECT_EQ(j[0]["history"].front()["change"], "created");
  EXPECT_EQ(j[0]["history"].back()["change"], "unmapped");
  CliRun text = Pageblame("query -i " + t.trace + " " + page + kSym);
  EXPECT_THAT(text.out, HasSubstr("not mapped; it was in [" + page));
  EXPECT_THAT(text.out, HasSubstr("unmapped by munmap("));
}

TEST(MomentCliTest, TimesOutsideTheTraceAreUsageErrorsNamingItsSpan) {
  const std::string trace = TracePath("rules-trace.data");
  for (const char* at : {"5", "99999", "+100", "-100", "18446744074"}) {
    SCOPED_TRACE(at);
    CliRun r = Pageblame("maps -i " + trace + " --at " + at);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_FALSE(r.crashed);
    EXPECT_TRUE(r.out.empty());
  }
  CliRun r = Pageblame("maps -i " + trace + " --at 5");
  EXPECT_THAT(r.err, HasSubstr("outside the trace, which spans 727.5"));
  CliRun pid = Pageblame("maps -i " + trace + " --pid 1");
  EXPECT_EQ(pid.exit_code, 2);
  EXPECT_THAT(pid.err, HasSubstr("no process with pid 1 in the trace (its pids: 10981, 10985, 10986)"));
  // Relative times inside it answer.
  EXPECT_EQ(Pageblame("maps -i " + trace + " --at +0.001").exit_code, 0);
  EXPECT_EQ(Pageblame("maps -i " + trace + " --at -0.001").exit_code, 0);
}

TEST(MomentCliTest, LabelsSayWhatTheTraceKnows) {
  CliRun r = Pageblame("maps -i " + TracePath("rules-trace.data") + " --pid 10981" + kSym);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // ld.so's mappings of libraries by fd: a file, though the trace never saw its path.
  EXPECT_THAT(r.out, HasSubstr("[file fd=3]"));
  // The heap grown by several brk calls is one row, as pmap shows it.
  int heap_rows = 0;
  for (size_t at = r.out.find("[heap]"); at != std::string::npos; at = r.out.find("[heap]", at + 1)) ++heap_rows;
  EXPECT_EQ(heap_rows, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("more calls"));
  CliRun split = Pageblame("maps -i " + TracePath("rules-trace.data") + " --pid 10981 --split" + kSym);
  int split_heap_rows = 0;
  for (size_t at = split.out.find("[heap]"); at != std::string::npos; at = split.out.find("[heap]", at + 1)) {
    ++split_heap_rows;
  }
  EXPECT_GT(split_heap_rows, 1);
}

TEST(MomentCliTest, VersionSaysReleaseAndRevision) {
  CliRun r = Pageblame("--version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(std::regex_search(r.out, std::regex("^pageblame [0-9]+\\.[0-9]+\\.[0-9]+ \\(git [0-9a-f]")))
      << r.out;
}

}  // namespace
}  // namespace pageblame::testing

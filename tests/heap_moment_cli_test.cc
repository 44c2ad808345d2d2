// Which heap snapshot speaks for a moment (docs/heap.md), on the bundled
// residency recording (traces/residency.data + .rss, of traces/src/residency.c)
// with a hand-made TRACE.heap beside it. `record` walks the heaps of a
// moment just after that moment's residency snapshots, so a walk is stamped
// a little after the residency snapshot it goes with:
//   - --at a residency snapshot's time takes the walk stamped just after it
//     (before the pid's next residency snapshot), in `heap -i` and
//     `attribute`, not the older walk at or before the moment;
//   - a moment whose walk is missing (skipped, failed) takes the latest at or
//     before it, not the next moment's walk;
//   - arena pages made after the heap snapshot taken are unknown in
//     `attribute` ("?" in text, null in JSON), never "0 B" in use.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "processor/heap/heap_snapshot_file.h"
#include "processor/residency/residency_index.h"
#include "processor/residency/snapshot_file.h"
#include "tests/cli_runner.h"
#include "tests/residency_fixtures.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

using Json = nlohmann::json;
using residency::ResidencySnapshot;

constexpr uint64_t kMicro = 1000;

// A heap snapshot of `pid` at `time` whose main arena's system bytes tell it
// apart from the others; no free range.
heap::HeapSnapshot HeapAt(uint32_t pid, uint64_t time, uint64_t marker) {
  heap::HeapSnapshot s;
  s.pid = pid;
  s.time = time;
  s.glibc_version = "2.36";
  s.arenas.resize(1);
  s.arenas[0].main = true;
  s.arenas[0].figures.system_bytes = marker;
  s.arenas[0].figures.in_use_bytes = marker;
  return s;
}

// `--at` of a time: rounded up to perf's microseconds (at or after it).
std::string At(uint64_t ns) {
  const uint64_t us = (ns + kMicro - 1) / kMicro;
  return absl::StrFormat(" --at %d.%06d", us / 1000000, us % 1000000);
}

class HeapMomentCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loaded = session::Session::Open(TraceSessionOptions("residency.data"));
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    absl::StatusOr<residency::ResidencyIndex> r =
        residency::ResidencyIndex::Load(residency::SnapshotPathFor(TracePath("residency.data")), (*loaded)->Facts());
    ASSERT_TRUE(r.ok()) << r.status();
    // The command's pid: the first its regions file names (residency_trace_test.cc).
    for (const auto& e : std::filesystem::directory_iterator(TracePath("truth"))) {
      const std::string name = e.path().filename();
      if (name.rfind("residency.", 0) == 0 && name.find(".regions.tsv") != std::string::npos) {
        const std::vector<TouchedRegion> regions = ReadTouchedRegions(e.path());
        ASSERT_FALSE(regions.empty());
        pid_ = regions[0].pid;
      }
    }
    ASSERT_NE(pid_, 0u);
    snaps_ = r->Of(pid_);
    ASSERT_GE(snaps_.size(), 4u);
    maps_ = TracePath(absl::StrCat("maps/residency.", pid_, ".pause.maps"));
    dir_ = ScratchPath("heap-moment");
    ASSERT_EQ(Shell("rm -rf " + dir_ + " && mkdir -p " + dir_ + " && ln -s " + TracePath("residency.data") + " " +
                    Trace() + " && cp " + TracePath("residency.data.rss") + " " + Trace() + ".rss")
                  .exit_code,
              0);
  }
  void WriteHeap(const std::vector<heap::HeapSnapshot>& snapshots) {
    std::string bytes = heap::EncodeHeapFileHeader(CLOCK_MONOTONIC);
    for (const heap::HeapSnapshot& s : snapshots) bytes += heap::EncodeHeapSnapshot(s);
    std::ofstream(Trace() + ".heap", std::ios::binary | std::ios::trunc) << bytes;
  }
  // The snapshot `heap -i` takes for `at`: its marker.
  uint64_t HeapTakes(const std::string& at) {
    CliRun run = Pageblame(absl::StrCat("heap --json --no-index -i ", Trace(), " --pid ", pid_, at));
    EXPECT_EQ(run.exit_code, 0) << run.err;
    if (run.exit_code != 0) return 0;
    return Json::parse(run.out)["arenas"][0]["system_bytes"].get<uint64_t>();
  }
  std::string Trace() const { return dir_ + "/t.data"; }

  uint32_t pid_ = 0;
  std::vector<ResidencySnapshot> snaps_;
  std::string dir_;
  std::string maps_;  // the kernel's maps at the program's pause
};

TEST_F(HeapMomentCliTest, TheWalkOfAResidencySnapshotSpeaksForItsMoment) {
  // Residency snapshots 1 and 2 of the pid: a walk stamped before 1, the
  // walk of 2 (1 µs after --at rounds it), none for 1.
  const uint64_t r1 = snaps_[1].time, r2 = snaps_[2].time;
  const uint64_t walk2 = (r2 + kMicro - 1) / kMicro * kMicro + kMicro;
  ASSERT_LT(walk2, snaps_[3].time);
  WriteHeap({HeapAt(pid_, r1 - kMicro, 111), HeapAt(pid_, walk2, 222)});
  EXPECT_EQ(HeapTakes(At(r2)), 222u) << "the walk of the residency snapshot at --at";
  EXPECT_EQ(HeapTakes(At(r1)), 111u) << "no walk for that moment: the latest before, not the next moment's";
  // (--at T.xxxxxx covers that whole microsecond, as perf prints times.)
  EXPECT_EQ(HeapTakes(At(r2 - 2 * kMicro)), 111u) << "before snapshot 2: snapshot 1's moment";
  EXPECT_EQ(HeapTakes(""), 222u) << "the end: the last";

  CliRun a = Pageblame(absl::StrCat("attribute --json --no-index -i ", Trace(), " --pid ", pid_, At(r2),
                                    " --regions ", maps_));
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NEAR(Json::parse(a.out)["heap_snapshot_time"].get<double>(), walk2 / 1e9, 1e-6);
}

// The times of the calls credited on arena stacks (kinds malloc and heap)
// of an attribute --json answer, in ns.
std::vector<uint64_t> ArenaCallTimes(const Json& answer) {
  std::vector<uint64_t> out;
  for (const Json& s : answer["stacks"]) {
    if (s["kind"] != "malloc" && s["kind"] != "heap") continue;
    const Json& call = s["commit"].is_null() ? s["origin"] : s["commit"];
    out.push_back(static_cast<uint64_t>(call["time"].get<double>() * 1e9 + 0.5));
  }
  return out;
}

TEST_F(HeapMomentCliTest, ArenaPagesMadeAfterTheHeapSnapshotAreUnknown) {
  const std::string args = absl::StrCat("attribute --no-index -i ", Trace(), " --pid ", pid_,
                                        At(snaps_.back().time - 2 * kMicro), " --regions ", maps_);
  CliRun first = Pageblame(args + " --json");  // no TRACE.heap yet: when the arena pages were made
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::vector<uint64_t> times = ArenaCallTimes(Json::parse(first.out));
  ASSERT_FALSE(times.empty());
  // One walk, after the exec (the first arena call is ld.so's, after it)
  // and before every arena page.
  WriteHeap({HeapAt(pid_, *std::min_element(times.begin(), times.end()) - kMicro, 111)});
  CliRun j = Pageblame(args + " --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const Json answer = Json::parse(j.out);
  ASSERT_TRUE(answer["heap_snapshot_time"].is_number()) << "the walk was not taken";
  int arena_stacks = 0;
  for (const Json& s : answer["stacks"]) {
    if (s["kind"] != "malloc" && s["kind"] != "heap") continue;
    ++arena_stacks;
    EXPECT_TRUE(s["in_use_bytes"].is_null() && s["free_bytes"].is_null()) << s.dump();
  }
  EXPECT_EQ(arena_stacks, static_cast<int>(times.size()));
  CliRun text = Pageblame(args);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(std::regex_search(text.out, std::regex(R"(\? +\d+ +\d+ +\d+ +(malloc|heap)\*)"))) << text.out;
  EXPECT_FALSE(std::regex_search(text.out, std::regex(R"( 0 B +\d+ +\d+ +\d+ +(malloc|heap)\*)"))) << text.out;
}

}  // namespace
}  // namespace pageblame::testing

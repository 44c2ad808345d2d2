// The bundled residency recording (traces/residency.data + .rss, recorded by
// `pageblame record --rss-every 0.2` of traces/src/residency.c by
// `traces/record.sh residency`): its snapshot file loads against the trace,
// and the snapshot requested while the program waited equals, mapping by
// mapping, the kernel's smaps saved at that same pause
// (traces/maps/residency.PID.pause.smaps), for the program and its forked
// child; each region holds the pages the program says it touched
// (traces/truth/residency.PID.regions.tsv).
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/residency/residency_index.h"
#include "processor/residency/snapshot_file.h"
#include "tests/residency_fixtures.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

using residency::ResidencySnapshot;
using residency::SnapshotReason;

// The program's pid: the one its regions file names.
std::string RegionsFile() {
  for (const auto& e : std::filesystem::directory_iterator(TracePath("truth"))) {
    const std::string name = e.path().filename();
    if (name.rfind("residency.", 0) == 0 && name.find(".regions.tsv") != std::string::npos) return e.path();
  }
  return "";
}

TEST(ResidencyTraceTest, RequestedSnapshotEqualsTheKernelsSmapsAtThePause) {
  const std::string regions_file = RegionsFile();
  ASSERT_FALSE(regions_file.empty()) << "no traces/truth/residency.PID.regions.tsv";
  const std::vector<TouchedRegion> regions = ReadTouchedRegions(regions_file);
  ASSERT_EQ(regions.size(), 5u);
  const uint32_t pid = regions[0].pid;
  const uint32_t child = regions.back().pid;
  ASSERT_NE(pid, child);

  auto loaded = session::Session::Open(TraceSessionOptions("residency.data"));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const residency::TraceFacts facts = (*loaded)->Facts();
  ASSERT_EQ(facts.clockid, std::optional<int32_t>(CLOCK_MONOTONIC));
  absl::StatusOr<residency::ResidencyIndex> r =
      residency::ResidencyIndex::Load(residency::SnapshotPathFor(TracePath("residency.data")), facts);
  ASSERT_TRUE(r.ok()) << r.status();

  for (uint32_t p : {pid, child}) {
    SCOPED_TRACE(absl::StrCat("pid ", p));
    const ResidencySnapshot* requested = nullptr;
    for (const ResidencySnapshot& s : r->Of(p)) {
      if (s.reason == SnapshotReason::kRequested) requested = &s;
    }
    ASSERT_NE(requested, nullptr);
    const std::vector<SmapsRow> smaps = ReadSmapsFile(TracePath(absl::StrCat("maps/residency.", p, ".pause.smaps")));
    std::string diffs;
    uint64_t rss_total = 0;
    EXPECT_GT(CompareWithSmaps(*requested, smaps, &diffs, &rss_total), 20u);
    EXPECT_TRUE(diffs.empty()) << diffs;
    EXPECT_EQ(requested->present.total(), rss_total);
    EXPECT_EQ(requested->rollup_rss, std::optional<uint64_t>(rss_total));
    for (const TouchedRegion& region : regions) {
      if (region.pid == p) ExpectTouchedPagesResident(region, *requested);
    }
  }
  // The command's last snapshot was taken at its exit, its memory whole.
  ASSERT_FALSE(r->Of(pid).empty());
  const ResidencySnapshot& last = r->Of(pid).back();
  EXPECT_EQ(last.reason, SnapshotReason::kExit);
  EXPECT_EQ(last.ResidentBytes(regions[0].start, regions[0].end), regions[0].touched * 4096);
}

}  // namespace
}  // namespace pageblame::testing

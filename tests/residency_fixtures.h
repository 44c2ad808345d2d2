// Shared by the residency tests (the live one, which records
// traces/src/residency.c, and the one on the bundled traces/residency.data):
// the program's account of its regions, the kernel's smaps as the oracle,
// and the facts a trace gives ResidencyIndex.
#ifndef PAGEBLAME_TESTS_RESIDENCY_FIXTURES_H_
#define PAGEBLAME_TESTS_RESIDENCY_FIXTURES_H_

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "processor/session/session.h"
#include "processor/session/residency_load.h"
#include "processor/residency/residency_index.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {

// One region residency.c made, as it says (DIR/NAME.PID.tsv: name, pid,
// start, end, pages touched and still resident).
struct TouchedRegion {
  std::string name;
  uint32_t pid = 0;
  uint64_t start = 0, end = 0, touched = 0;  // touched: pages
};

inline std::vector<TouchedRegion> ReadTouchedRegions(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  std::vector<TouchedRegion> out;
  for (absl::string_view line : absl::StrSplit(ss.str(), '\n', absl::SkipEmpty())) {
    std::vector<std::string> c = absl::StrSplit(line, '\t');
    TouchedRegion r;
    if (c.size() != 5 || !absl::SimpleAtoi(c[1], &r.pid) || !absl::SimpleHexAtoi(c[2], &r.start) ||
        !absl::SimpleHexAtoi(c[3], &r.end) || !absl::SimpleAtoi(c[4], &r.touched)) {
      ADD_FAILURE() << path << ": bad line " << line;
      continue;
    }
    r.name = c[0];
    out.push_back(r);
  }
  return out;
}

// Per mapping of smaps a snapshot reads (accessible, not [vsyscall]): the
// snapshot's resident bytes against smaps' Rss. Returns how many mappings
// were compared; each difference is a line of `diffs`; `rss_total` sums
// their Rss.
inline size_t CompareWithSmaps(const residency::ResidencySnapshot& s, const std::vector<SmapsRow>& smaps,
                               std::string* diffs, uint64_t* rss_total) {
  size_t compared = 0;
  for (const SmapsRow& m : smaps) {
    if (m.map.perms.compare(0, 3, "---") == 0 || m.map.path == "[vsyscall]") continue;
    ++compared;
    *rss_total += m.rss;
    const bool covered = s.Covers(m.map.start, m.map.end);
    const uint64_t got = s.ResidentBytes(m.map.start, m.map.end);
    if (!covered || got != m.rss) {
      absl::StrAppend(diffs, "\n  ", absl::Hex(m.map.start), "-", absl::Hex(m.map.end), " ", m.map.perms, " ",
                      m.map.path, ": snapshot ", got, ", smaps ", m.rss, covered ? "" : " (not read)");
    }
  }
  return compared;
}

// What ResidencyIndex checks a snapshot file against: one rule, the
// session's.

// The resident bytes of each region residency.c made, checked against what
// it says it touched: private anonymous pages exactly; the thread's stack a
// few pages more (the frames above its 1 MiB array); file pages at least
// those read and at most 64 KiB more (the kernel's fault-around maps cached
// neighbours of a faulting page too).
inline void ExpectTouchedPagesResident(const TouchedRegion& r, const residency::ResidencySnapshot& s) {
  SCOPED_TRACE(absl::StrCat(r.name, " of pid ", r.pid));
  const uint64_t resident = s.ResidentBytes(r.start, r.end);
  const uint64_t touched = r.touched * 4096;
  if (r.name == "every4th" || r.name == "cow") {
    EXPECT_EQ(resident, touched);
  } else {
    EXPECT_TRUE(r.name == "stack" || r.name == "file") << r.name;
    EXPECT_GE(resident, touched);
    EXPECT_LE(resident, touched + 16 * 4096);
  }
}

}  // namespace pageblame::testing

#endif  // PAGEBLAME_TESTS_RESIDENCY_FIXTURES_H_

// UnaccountedOf on residency.data (with its snapshots) copied beside runtime
// tables: the pieces are exactly the process's accessible pages at the
// table's moment less the table's ranges (computed here from the index's
// versions), from the table the user names (at --at) or the latest one
// `record` saved at or before --at (at its own moment); saved tables stamped
// outside the recording are not used, and which process is meant is said.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/format.h"
#include "processor/base/temp_dir_for_test.h"
#include "processor/base/usage_error.h"
#include "processor/index/committed.h"
#include "processor/session/selection.h"
#include "processor/session/session.h"
#include "processor/session/unaccounted.h"
#include "tests/trace_fixtures.h"

namespace pageblame::session {
namespace {

using ::testing::HasSubstr;
using testing::PageSet;

class UnaccountedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    trace_ = dir_.path() + "/r.data";
    std::filesystem::copy_file(testing::TracePath("residency.data"), trace_);
    std::filesystem::copy_file(testing::TracePath("residency.data.rss"), trace_ + ".rss");
    std::filesystem::create_directory(trace_ + ".runtime");
    SessionOptions o = testing::TraceSessionOptions(trace_);
    o.symbols.inline_frames = false;  // not about frames: no DWARF of libc read
    absl::StatusOr<std::unique_ptr<Session>> s = Session::Open(o);
    ASSERT_TRUE(s.ok()) << s.status();
    session_ = *std::move(s);
    // traces/MANIFEST.md: residency.c, pid 32331, and its forked child 32336.
    pid_ = 32331;
  }
  Selection At(std::optional<uint32_t> pid, uint64_t at) {
    absl::StatusOr<Selection> s = Resolve({pid, TimeSpec{}}, *session_, PeakOf::kMapped);
    EXPECT_TRUE(s.ok()) << s.status();
    Selection out = s.value_or(Selection{});
    out.at = at;
    return out;
  }
  // The pid's accessible pages at `time`, from the index's versions.
  PageSet Accessible(uint64_t time) {
    const index::TraceIndex& idx = session_->index();
    EXPECT_EQ(idx.ProcessesWithPid(pid_).size(), 1u);
    PageSet out;
    for (VersionId v : idx.RegionsAt(idx.ProcessesWithPid(pid_).at(0), time)) {
      if (index::IsCommitted(idx.version(v))) out.Add(idx.version(v).start, idx.version(v).end);
    }
    return out;
  }
  // A runtime table claiming the first half of each of the process's three
  // biggest accessible mappings at `time`: "START-END" ranges.
  std::string Table(uint64_t time, PageSet* claimed) {
    const PageSet accessible = Accessible(time);
    std::vector<std::pair<uint64_t, uint64_t>> ranges(accessible.ranges().begin(), accessible.ranges().end());
    std::sort(ranges.begin(), ranges.end(),
              [](const auto& a, const auto& b) { return a.second - a.first > b.second - b.first; });
    std::string text;
    for (size_t i = 0; i < 3 && i < ranges.size(); ++i) {
      const uint64_t half = ((ranges[i].second - ranges[i].first) / 2) & ~uint64_t{4095};
      claimed->Add(ranges[i].first, ranges[i].first + half);
      absl::StrAppend(&text, Hex(ranges[i].first), "-", Hex(ranges[i].first + half), "\n");
    }
    return text;
  }
  std::string Save(uint64_t time, const std::string& text) {
    const std::string path = absl::StrCat(trace_, ".runtime/", pid_, "-", time, ".txt");
    std::ofstream(path) << text;
    return path;
  }
  // The pieces as one page set; they are disjoint and biggest first.
  static PageSet Pieces(const Unaccounted& u) {
    PageSet out;
    for (size_t i = 0; i < u.pieces.size(); ++i) {
      EXPECT_TRUE(out.Intersect([&] { PageSet p; p.Add(u.pieces[i].start, u.pieces[i].end); return p; }()).empty());
      if (i > 0) {
        EXPECT_GE(u.pieces[i - 1].size(), u.pieces[i].size());
      }
      out.Add(u.pieces[i].start, u.pieces[i].end);
    }
    return out;
  }
  uint64_t First() const { return session_->index().stats().first_time; }
  uint64_t Last() const { return session_->index().stats().last_time; }

  TempDir dir_{"pb_unaccounted"};
  std::string trace_;
  std::unique_ptr<Session> session_;
  uint32_t pid_ = 0;
};

TEST_F(UnaccountedTest, ANamedTableIsComparedAtTheMomentAsked) {
  const uint64_t at = First() + (Last() - First()) / 2;
  PageSet claimed;
  const std::string table = dir_.path() + "/maddress.txt";
  std::ofstream(table) << Table(at, &claimed);
  absl::StatusOr<Unaccounted> u = UnaccountedOf(*session_, At(pid_, at), table);
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->pid, pid_);
  EXPECT_EQ(u->time, at);
  EXPECT_EQ(u->table, table);
  EXPECT_FALSE(u->saved);
  const PageSet accessible = Accessible(at);
  ASSERT_GT(claimed.Bytes(), 0u);
  EXPECT_EQ(u->committed, accessible.Bytes());
  const PageSet expected = accessible.Minus(claimed);
  EXPECT_EQ(u->bytes, expected.Bytes());
  EXPECT_TRUE(Pieces(*u) == expected) << Pieces(*u).Minus(expected).Describe() << expected.Minus(Pieces(*u)).Describe();
}

// The saved tables: the latest at or before --at, at its own moment; none
// before the first; one stamped after the recording never.
TEST_F(UnaccountedTest, TheLatestSavedTableAtOrBeforeTheMomentDecides) {
  const uint64_t t1 = First() + (Last() - First()) / 3, t2 = Last() - 1000;
  PageSet claimed1, claimed2;
  const std::string p1 = Save(t1, Table(t1, &claimed1));
  const std::string p2 = Save(t2, Table(t2, &claimed2));
  // Stamped a year after the recording: another recording's, or forged.
  Save(Last() + uint64_t{365} * 86400 * 1000000000, "0-7ffffffff000\n");

  absl::StatusOr<Unaccounted> mid = UnaccountedOf(*session_, At(pid_, (t1 + t2) / 2), std::nullopt);
  ASSERT_TRUE(mid.ok()) << mid.status();
  EXPECT_TRUE(mid->saved);
  EXPECT_EQ(mid->table, p1);
  EXPECT_EQ(mid->time, t1);
  EXPECT_TRUE(Pieces(*mid) == Accessible(t1).Minus(claimed1));

  absl::StatusOr<Unaccounted> end = UnaccountedOf(*session_, At(pid_, index::kEndOfTrace), std::nullopt);
  ASSERT_TRUE(end.ok()) << end.status();
  EXPECT_EQ(end->table, p2);
  EXPECT_EQ(end->time, t2);
  EXPECT_EQ(end->bytes, Accessible(t2).Minus(claimed2).Bytes());

  absl::StatusOr<Unaccounted> before = UnaccountedOf(*session_, At(pid_, t1 - 1), std::nullopt);
  ASSERT_FALSE(before.ok());
  EXPECT_TRUE(absl::IsNotFound(before.status()));
  EXPECT_THAT(before.status().message(),
              HasSubstr(absl::StrCat("no .NET runtime table of pid ", pid_, " saved beside ", trace_, " at or before ",
                                     FormatTime(t1 - 1))));
  EXPECT_THAT(before.status().message(), HasSubstr(", after the trace ended ("));
}

// Without --pid: the only process with saved tables; with none, or a
// named table, the user must say which.
TEST_F(UnaccountedTest, WhichProcessIsMeantIsTheOnlyOneWithTablesElseAsked) {
  const std::vector<uint32_t> pids = session_->index().Pids();
  ASSERT_EQ(pids.size(), 2u);
  absl::StatusOr<Unaccounted> none = UnaccountedOf(*session_, At(std::nullopt, index::kEndOfTrace), std::nullopt);
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(IsUsage(none.status()));
  EXPECT_EQ(none.status().message(), absl::StrCat("--unaccounted is about one process: choose it with --pid (the trace's: ",
                                                  pids[0], ", ", pids[1], ")"));
  PageSet claimed;
  Save(Last() - 1000, Table(Last() - 1000, &claimed));
  absl::StatusOr<Unaccounted> one = UnaccountedOf(*session_, At(std::nullopt, index::kEndOfTrace), std::nullopt);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->pid, pid_);
  const std::string table = dir_.path() + "/maddress.txt";
  std::ofstream(table) << "0-1000\n";
  absl::StatusOr<Unaccounted> named = UnaccountedOf(*session_, At(std::nullopt, index::kEndOfTrace), table);
  ASSERT_FALSE(named.ok());
  EXPECT_TRUE(IsUsage(named.status()));
}

// AddressSpaceAt is the process's versions then, as a maps-format table.
TEST_F(UnaccountedTest, TheAddressSpaceIsTheVersionsAliveThen) {
  const index::TraceIndex& idx = session_->index();
  const uint32_t p = idx.ProcessesWithPid(pid_).at(0);
  const uint64_t at = First() + (Last() - First()) / 2;
  const regions::RegionTable t = AddressSpaceAt(idx, p, at);
  const std::vector<VersionId> alive = idx.RegionsAt(p, at);
  ASSERT_EQ(t.regions.size(), alive.size());
  PageSet committed;
  for (size_t i = 0; i < alive.size(); ++i) {
    const index::Version& v = idx.version(alive[i]);
    EXPECT_EQ(t.regions[i].start, v.start);
    EXPECT_EQ(t.regions[i].end, v.end);
    EXPECT_EQ(t.IsCommitted(t.regions[i]), index::IsCommitted(v)) << t.regions[i].protect;
    EXPECT_EQ(t.regions[i].usage, std::string(idx.strings().Get(v.attrs.path)));
  }
}

}  // namespace
}  // namespace pageblame::session

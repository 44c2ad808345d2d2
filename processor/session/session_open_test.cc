// Session::Open: every option reaches the load (residency off, required,
// named, found beside the trace; -f; where symbols come from), side files
// are judged as docs/cli.md says (a broken TRACE.rss is a warning, an error
// when required), the warnings say what the trace's own records say, in
// order, and Facts() is the trace's clock, start, pids and end (the file's
// last write on perf's clock data).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/format.h"
#include "processor/base/shared_dir_for_test.h"
#include "processor/base/temp_dir_for_test.h"
#include "processor/replay/recording_file.h"
#include "processor/replay/trace_loader.h"
#include "processor/session/libc_cut.h"
#include "processor/session/session.h"
#include "tests/trace_fixtures.h"

namespace pageblame::session {
namespace {

using ::testing::HasSubstr;
using testing::TracePath;

constexpr uid_t kNobody = 65534;

absl::StatusOr<std::unique_ptr<Session>> Open(const std::string& path, ResidencyRequest residency = {},
                                              bool force = false) {
  SessionOptions o = testing::TraceSessionOptions(path);
  // Not about frames: no DWARF of libc read for inlined functions (most
  // of the load of a DWARF trace).
  o.symbols.inline_frames = false;
  o.residency = residency;
  o.force = force;
  return Session::Open(o);
}

ResidencyRequest Off() {
  ResidencyRequest r;
  r.off = true;
  return r;
}
ResidencyRequest Required() {
  ResidencyRequest r;
  r.required = true;
  return r;
}
ResidencyRequest Named(const std::string& path) {
  ResidencyRequest r;
  r.path = path;
  return r;
}

// residency.data (recorded by `pageblame record`) copied into `dir`,
// without its snapshots; returns the copy's path.
std::string CopyResidencyTrace(const std::string& dir) {
  const std::string trace = dir + "/r.data";
  std::filesystem::copy_file(TracePath("residency.data"), trace);
  return trace;
}

TEST(SessionOpenTest, SnapshotsBesideTheTraceAreLoadedUnlessOff) {
  absl::StatusOr<std::unique_ptr<Session>> found = Open("residency.data");
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_NE((*found)->residency(), nullptr);
  EXPECT_EQ((*found)->residency()->path(), TracePath("residency.data.rss"));
  // Both recorded processes have snapshots (docs/residency.md: 11 in all).
  for (uint32_t pid : (*found)->index().Pids()) EXPECT_FALSE((*found)->residency()->Of(pid).empty()) << pid;
  EXPECT_THAT((*found)->warnings(), ::testing::IsEmpty());
  absl::StatusOr<std::unique_ptr<Session>> off = Open("residency.data", Off());
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_EQ((*off)->residency(), nullptr);
  // A trace without a file beside it: none, and nothing to say.
  absl::StatusOr<std::unique_ptr<Session>> none = Open("phases-fp.data");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ((*none)->residency(), nullptr);
  EXPECT_THAT((*none)->warnings(), ::testing::IsEmpty());
}

TEST(SessionOpenTest, ANamedSnapshotFileIsReadAndAMissingOneIsAnError) {
  TempDir dir("pb_session");
  const std::string trace = CopyResidencyTrace(dir.path());
  absl::StatusOr<std::unique_ptr<Session>> named = Open(trace, Named(TracePath("residency.data.rss")));
  ASSERT_TRUE(named.ok()) << named.status();
  ASSERT_NE((*named)->residency(), nullptr);
  EXPECT_EQ((*named)->residency()->path(), TracePath("residency.data.rss"));
  absl::StatusOr<std::unique_ptr<Session>> missing = Open(trace, Named(dir.path() + "/nothing.rss"));
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr(dir.path() + "/nothing.rss"));
  // Required, and none beside the copy: an error saying how to get some.
  absl::StatusOr<std::unique_ptr<Session>> required = Open(trace, Required());
  ASSERT_FALSE(required.ok());
  EXPECT_EQ(required.status().message(),
            absl::StrCat("no residency snapshots: ", trace,
                         ".rss does not exist (pageblame record writes TRACE.rss beside the trace; --rss FILE names one)"));
}

// A TRACE.rss the user did not name that cannot be used: the answer without
// resident bytes, and a warning after the load's own; an error when the
// answer needs them.
TEST(SessionOpenTest, ABrokenSnapshotFileBesideTheTraceIsAWarningOrAnErrorWhenRequired) {
  TempDir dir("pb_session");
  const std::string trace = dir.path() + "/lost.data";
  std::filesystem::copy_file(TracePath("rules-lost.data"), trace);
  std::ofstream(trace + ".rss") << "not a snapshot file";
  absl::StatusOr<std::unique_ptr<Session>> s = Open(trace);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)->residency(), nullptr);
  const std::vector<std::string>& w = (*s)->warnings();
  ASSERT_GE(w.size(), 2u);
  EXPECT_TRUE(absl::StartsWith(w.back(), "warning: " + trace + ".rss")) << w.back();
  EXPECT_TRUE(absl::EndsWith(w.back(), "; resident bytes are left out")) << w.back();
  EXPECT_THAT(w.front(), HasSubstr(" lost between "));  // the load's warnings first
  absl::StatusOr<std::unique_ptr<Session>> required = Open(trace, Required());
  ASSERT_FALSE(required.ok());
  EXPECT_THAT(required.status().message(), HasSubstr(trace + ".rss"));
  // Snapshots of another recording (residency.data's) beside this trace: the same.
  std::filesystem::copy_file(TracePath("residency.data.rss"), trace + ".rss",
                             std::filesystem::copy_options::overwrite_existing);
  absl::StatusOr<std::unique_ptr<Session>> other = Open(trace);
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ((*other)->residency(), nullptr);
  EXPECT_TRUE(absl::EndsWith((*other)->warnings().back(), "; resident bytes are left out"));
}

// TRACE.rss in a directory anyone can write, owned by another user: not
// used (a warning naming its owner) unless -f.
TEST(SessionOpenTest, ForceReachesTheSnapshotFilesTrust) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give the file to another user";
  SharedDirForTest shared;
  const std::string trace = CopyResidencyTrace(shared.path());
  std::filesystem::copy_file(TracePath("residency.data.rss"), trace + ".rss");
  ASSERT_EQ(::chown((trace + ".rss").c_str(), kNobody, kNobody), 0);
  absl::StatusOr<std::unique_ptr<Session>> s = Open(trace);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)->residency(), nullptr);
  ASSERT_FALSE((*s)->warnings().empty());
  EXPECT_THAT((*s)->warnings().back(), HasSubstr(trace + ".rss: owned by nobody (uid 65534)"));
  absl::StatusOr<std::unique_ptr<Session>> forced = Open(trace, {}, /*force=*/true);
  ASSERT_TRUE(forced.ok()) << forced.status();
  EXPECT_NE((*forced)->residency(), nullptr);
  EXPECT_THAT((*forced)->warnings(), ::testing::IsEmpty());
  EXPECT_TRUE((*forced)->force());
}

// phases-fp.data names /work/wt/growth/traces/bin/phases, gone from this
// machine: its frames are named only by the binary the options lead to
// (the build-id cache, or a copy beside the trace).
TEST(SessionOpenTest, TheSymbolOptionsDecideWhereFramesAreNamedFrom) {
  if (std::filesystem::exists("/work/wt/growth/traces/bin/phases")) GTEST_SKIP() << "the recorded binary exists";
  TempDir dir("pb_session");
  const std::string trace = dir.path() + "/phases.data";
  std::filesystem::copy_file(TracePath("phases-fp.data"), trace);
  std::filesystem::create_directory(dir.path() + "/empty-cache");
  auto named = [](const Session& s) {
    size_t n = 0;
    const index::TraceIndex& idx = s.index();
    for (uint32_t i = 0; i < idx.num_events(); ++i) {
      for (const symbols::Frame& f : s.frames().Frames(idx.event(EventId(i)))) n += f.symbol && *f.symbol == "grow_cache";
    }
    return n;
  };
  SessionOptions o;
  o.path = trace;
  o.symbols.debug_dir = dir.path() + "/empty-cache";
  absl::StatusOr<std::unique_ptr<Session>> bare = Session::Open(o);
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_EQ(named(**bare), 0u);
  o.symbols.debug_dir = TracePath("buildid-cache");
  absl::StatusOr<std::unique_ptr<Session>> cached = Session::Open(o);
  ASSERT_TRUE(cached.ok()) << cached.status();
  const size_t grow_cache = named(**cached);
  EXPECT_GT(grow_cache, 0u);
  // The binary beside the trace: found by the trace's path.
  o.symbols.debug_dir = dir.path() + "/empty-cache";
  std::filesystem::copy_file(TracePath("bin/phases"), dir.path() + "/phases");
  absl::StatusOr<std::unique_ptr<Session>> beside = Session::Open(o);
  ASSERT_TRUE(beside.ok()) << beside.status();
  EXPECT_EQ(named(**beside), grow_cache);
}

// rules-lost.data: perf lost events (traces/manifest.tsv's lost_records):
// each lost span said once, with its times, inside the trace's span.
// record --max-size folds every chunk into TRACE.index and removes them:
// with neither TRACE nor a chunk there, the index is the recording (it
// answers as the replay did); unusable, it is an error, never a replay of
// nothing.
TEST(SessionOpenTest, AFoldedRecordingIsItsIndexAlone) {
  TempDir dir("pb_folded");
  const std::string trace = dir.path() + "/t.data";
  replay::LoadOptions load;
  load.path = TracePath("rules-record.data");
  load.preload_symbols = false;
  absl::StatusOr<std::unique_ptr<replay::LoadedTrace>> replayed = replay::LoadTrace(load);
  ASSERT_TRUE(replayed.ok()) << replayed.status();
  replay::LoadOptions folded;
  folded.path = trace;
  folded.folded = true;
  absl::StatusOr<replay::RecordingFile::Identity> id = replay::RecordingFile::Identity::Of(folded);
  ASSERT_TRUE(id.ok()) << id.status();
  {
    std::ofstream out(trace + ".index", std::ios::binary);
    out << replay::RecordingFile::Encode(**replayed, *id);
  }
  ASSERT_EQ(::chmod((trace + ".index").c_str(), 0600), 0);
  absl::StatusOr<std::unique_ptr<Session>> s = Open(trace, Off());
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)->index_use(), Session::IndexUse::kLoaded);
  EXPECT_EQ((*s)->index().stats().calls, (*replayed)->index().stats().calls);
  EXPECT_GT((*s)->index().stats().calls, 0u);

  SessionOptions no_index = testing::TraceSessionOptions(trace);
  no_index.use_index = false;
  absl::StatusOr<std::unique_ptr<Session>> refused = Session::Open(no_index);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("--no-index: a folded recording is its index alone"));

  std::ofstream(trace + ".index", std::ios::binary | std::ios::trunc) << "PBINDEX";  // cut
  absl::StatusOr<std::unique_ptr<Session>> damaged = Open(trace, Off());
  ASSERT_FALSE(damaged.ok());
  EXPECT_THAT(std::string(damaged.status().message()), HasSubstr("has no raw trace left"));
}

TEST(SessionWarningsTest, LostEventsAreSaidWithTheSpanTheyAffect) {
  absl::StatusOr<std::unique_ptr<Session>> s = Open("rules-lost.data");
  ASSERT_TRUE(s.ok()) << s.status();
  size_t lost_records = 0;
  for (const testing::ManifestRow& r : testing::ReadManifest()) {
    if (r["trace"] == "rules-lost.data") lost_records = std::stoul(r["lost_records"]);
  }
  ASSERT_GT(lost_records, 0u);
  const index::TraceStats& stats = (*s)->index().stats();
  std::vector<std::string> said;  // each span, in the trace's order
  size_t events = 0;
  for (const index::LostSpan& l : stats.lost) {
    EXPECT_LE(stats.first_time, l.t_from);
    EXPECT_LE(l.t_from, l.t_to);
    EXPECT_LE(l.t_to, stats.last_time);
    said.push_back(absl::StrCat("warning: ", l.count, l.samples ? " samples" : " events", " lost between ",
                                FormatTime(l.t_from), " and ", FormatTime(l.t_to),
                                "; pages changed then may be misattributed"));
    events += !l.samples;
  }
  std::vector<std::string> lost;
  for (const std::string& w : (*s)->warnings()) {
    if (absl::StrContains(w, " lost between ")) lost.push_back(w);
  }
  EXPECT_EQ(lost, said);
  EXPECT_EQ(events, lost_records);
}

// alloc-fp.data: frame-pointer stacks cut in libc (Debian's libc has no
// frame pointers). The note is the last thing said, and it is what the
// stacks themselves show.
TEST(SessionWarningsTest, AFramePointerTraceCutInLibcEndsWithTheRecordingThatFixesIt) {
  absl::StatusOr<std::unique_ptr<Session>> s = Open("alloc-fp.data");
  ASSERT_TRUE(s.ok()) << s.status();
  const LibcCut cut = FindLibcCut((*s)->index(), (*s)->symbolizer());
  ASSERT_TRUE(cut.Mostly());
  EXPECT_LE(cut.cut, cut.calls);
  ASSERT_FALSE((*s)->warnings().empty());
  EXPECT_EQ((*s)->warnings().back(), LibcCutHint(cut));
  EXPECT_THAT(cut.leaves, ::testing::Not(::testing::IsEmpty()));
  for (const std::string& leaf : cut.leaves) EXPECT_THAT((*s)->warnings().back(), HasSubstr(leaf));
  EXPECT_THAT((*s)->warnings().back(), HasSubstr("call-graph=dwarf"));
  // DWARF stacks of the same program reach its code: nothing to say.
  absl::StatusOr<std::unique_ptr<Session>> dwarf = Open("alloc-dwarf.data");
  ASSERT_TRUE(dwarf.ok());
  EXPECT_THAT((*dwarf)->warnings(), ::testing::IsEmpty());
}

// residency.data was recorded with -k mono: the clock, the recording's
// start from perf's clock data, and its end from the file's last write.
TEST(SessionFactsTest, TheClockStartPidsAndEndOfTheRecording) {
  TempDir dir("pb_session");
  const std::string trace = CopyResidencyTrace(dir.path());
  absl::StatusOr<std::unique_ptr<Session>> s = Open(trace, Off());
  ASSERT_TRUE(s.ok()) << s.status();
  const perf::FileInfo& info = (*s)->info();
  const index::TraceIndex& idx = (*s)->index();
  ASSERT_TRUE(info.clock_start && info.clock_start_wall);
  const uint64_t start = *info.clock_start, wall = *info.clock_start_wall;
  // Last written 2 s after the last event, on the trace's clock.
  const uint64_t mtime = wall + (idx.stats().last_time - start) + 2000000000;
  const struct timespec times[2] = {{static_cast<time_t>(mtime / 1000000000), static_cast<long>(mtime % 1000000000)},
                                    {static_cast<time_t>(mtime / 1000000000), static_cast<long>(mtime % 1000000000)}};
  ASSERT_EQ(::utimensat(AT_FDCWD, trace.c_str(), times, 0), 0);
  const residency::TraceFacts f = (*s)->Facts();
  EXPECT_EQ(f.clockid, CLOCK_MONOTONIC);
  EXPECT_EQ(f.first_time, std::min(idx.stats().first_time, start));
  EXPECT_THAT(f.pids, ::testing::UnorderedElementsAreArray(idx.Pids()));
  EXPECT_EQ(f.end_time, idx.stats().last_time + 2000000000);
  // Written before the last event (a clock set back, a copy): the last event bounds it.
  const uint64_t early = wall + 1000;
  const struct timespec back[2] = {{static_cast<time_t>(early / 1000000000), static_cast<long>(early % 1000000000)},
                                   {static_cast<time_t>(early / 1000000000), static_cast<long>(early % 1000000000)}};
  ASSERT_EQ(::utimensat(AT_FDCWD, trace.c_str(), back, 0), 0);
  EXPECT_EQ((*s)->Facts().end_time, idx.stats().last_time);
  // Before the recording began on the wall clock: unknown.
  const struct timespec before[2] = {{static_cast<time_t>(wall / 1000000000) - 10, 0},
                                     {static_cast<time_t>(wall / 1000000000) - 10, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, trace.c_str(), before, 0), 0);
  EXPECT_EQ((*s)->Facts().end_time, 0u);
  // A trace without clock data (perf trace record, no -k): its end is unknown.
  absl::StatusOr<std::unique_ptr<Session>> old = Open("rules-trace.data");
  ASSERT_TRUE(old.ok());
  ASSERT_FALSE((*old)->info().clock_start.has_value());
  EXPECT_EQ((*old)->Facts().end_time, 0u);
  EXPECT_EQ((*old)->Facts().first_time, (*old)->index().stats().first_time);
}

}  // namespace
}  // namespace pageblame::session

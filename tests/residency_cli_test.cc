// Residency snapshots as `pageblame record` takes them, for real (issue 28):
// it records traces/src/residency.c (known page sets: every 4th page of
// 64 MiB with half of it released, a thread's 64 MiB stack with 1 MiB used,
// a file read in part, copy-on-write pages in a forked child) with
// --rss-every 0.2, asks for a snapshot (SIGUSR1) while the program waits on
// its FIFO, and reads the kernel's /proc/PID/smaps at that same pause: per
// mapping, the snapshot's resident bytes equal smaps' Rss. Then TRACE.rss
// loads with ResidencyIndex against the trace (clock, pids, times), and the
// snapshots' times are on the trace's clock: the requested one falls between
// the moments this test saw the pause begin and end (CLOCK_MONOTONIC, read
// here), the exit one between the command's last memory call and its exit.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/residency/residency_index.h"
#include "processor/residency/snapshot_file.h"
#include "tests/cli_runner.h"
#include "tests/tool_runner.h"
#include "tests/residency_fixtures.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

using residency::ResidencySnapshot;
using residency::SnapshotReason;
using ::testing::HasSubstr;

uint64_t MonotonicNow() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// `pageblame record ARGS` in the background, its stderr to a file.
pid_t StartRecord(const std::vector<std::string>& args, const std::string& err_file) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  const int err = open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dup2(err, 2);
  const int out = open((err_file + ".out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dup2(out, 1);
  std::vector<std::string> argv = {std::string(PAGEBLAME_BINARY_DIR) + "/bin/pageblame", "record"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> c;
  for (std::string& a : argv) c.push_back(a.data());
  c.push_back(nullptr);
  execv(c[0], c.data());
  _exit(127);
}

// The requested snapshots in the file so far (it is being appended to: a
// read that meets a record cut short is tried again).
std::vector<ResidencySnapshot> RequestedSnapshots(const std::string& path) {
  absl::StatusOr<residency::SnapshotFile> f = residency::ReadSnapshotFile(path);
  std::vector<ResidencySnapshot> out;
  if (!f.ok()) return out;
  for (ResidencySnapshot& s : f->snapshots) {
    if (s.reason == SnapshotReason::kRequested) out.push_back(std::move(s));
  }
  return out;
}

const ResidencySnapshot* OfPid(const std::vector<ResidencySnapshot>& v, uint32_t pid) {
  for (const ResidencySnapshot& s : v) {
    if (s.pid == pid) return &s;
  }
  return nullptr;
}

TEST(ResidencyLiveTest, RequestedSnapshotEqualsSmapsAndLoadsAgainstTheTrace) {
  if (geteuid() != 0) GTEST_SKIP() << "recording syscall tracepoints needs root";
  if (!HaveTool("/usr/bin/perf") && system("command -v perf >/dev/null") != 0) GTEST_SKIP() << "no perf";
  const std::string dir = ScratchPath("residency-live");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  const std::string trace = dir + "/t.data";
  const std::string err_file = dir + "/record.err";
  const std::string program = std::string(PAGEBLAME_BINARY_DIR) + "/tests/residency";
  const pid_t record =
      StartRecord({"--rss-every", "0.2", "-o", trace, "--", program, dir, "r"}, err_file);
  ASSERT_GT(record, 0);
  // The program's pause: DIR/r.ready names it and its child.
  uint32_t pid = 0, child = 0;
  for (int i = 0; i < 1200 && pid == 0; ++i) {
    std::istringstream(ReadText(dir + "/r.ready")) >> pid >> child;
    if (pid == 0) SleepMs(50);
  }
  auto release = [&] {
    const int go = open((dir + "/r.go").c_str(), O_WRONLY | O_NONBLOCK);
    if (go >= 0) close(go);
  };
  if (pid == 0) {
    kill(record, SIGINT);
    waitpid(record, nullptr, 0);
    FAIL() << "the program never paused:\n" << ReadText(err_file);
  }
  const uint64_t paused_seen = MonotonicNow();
  SleepMs(500);  // periodic snapshots during the pause too
  ASSERT_EQ(kill(record, SIGUSR1), 0);
  std::vector<ResidencySnapshot> requested;
  for (int i = 0; i < 400 && requested.size() < 2; ++i) {
    SleepMs(25);
    requested = RequestedSnapshots(residency::SnapshotPathFor(trace));
  }
  // The kernel's view at the same pause (nothing of the program runs).
  const std::vector<SmapsRow> smaps = ReadSmapsFile(absl::StrCat("/proc/", pid, "/smaps"));
  const std::vector<SmapsRow> child_smaps = ReadSmapsFile(absl::StrCat("/proc/", child, "/smaps"));
  const std::vector<TouchedRegion> regions = ReadTouchedRegions(absl::StrCat(dir, "/r.", pid, ".tsv"));
  const uint64_t release_at = MonotonicNow();
  release();
  int status = 0;
  for (int i = 0; i < 1200 && waitpid(record, &status, WNOHANG) == 0; ++i) SleepMs(50);
  if (kill(record, 0) == 0) {
    kill(record, SIGKILL);
    waitpid(record, &status, 0);
    FAIL() << "pageblame record did not end:\n" << ReadText(err_file);
  }
  const std::string err = ReadText(err_file);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << err;
  EXPECT_THAT(err, HasSubstr("requested snapshot of 2 processes written to " + trace + ".rss")) << err;
  EXPECT_THAT(err, HasSubstr(absl::StrCat("pid ", pid, " (residency) "))) << err;
  EXPECT_THAT(err, HasSubstr(" at its exit")) << err;
  EXPECT_THAT(err, HasSubstr("residency snapshots in " + trace + ".rss")) << err;

  // Per mapping: the snapshot equals smaps' Rss, private anonymous and file
  // pages alike (both count the pages the page tables map).
  ASSERT_EQ(requested.size(), 2u) << err;
  const ResidencySnapshot* main_snap = OfPid(requested, pid);
  const ResidencySnapshot* child_snap = OfPid(requested, child);
  ASSERT_NE(main_snap, nullptr);
  ASSERT_NE(child_snap, nullptr);
  for (const auto& [snap, rows] : {std::pair{main_snap, &smaps}, std::pair{child_snap, &child_smaps}}) {
    std::string diffs;
    uint64_t rss_total = 0;
    EXPECT_GT(CompareWithSmaps(*snap, *rows, &diffs, &rss_total), 20u);
    EXPECT_TRUE(diffs.empty()) << "pid " << snap->pid << ":" << diffs;
    EXPECT_EQ(snap->present.total(), rss_total) << snap->pid;
    ASSERT_TRUE(snap->rollup_rss.has_value());
    EXPECT_EQ(*snap->rollup_rss, rss_total) << "smaps_rollup against smaps, pid " << snap->pid;
  }
  // Per region: what the program touched.
  ASSERT_EQ(regions.size(), 5u);
  for (const TouchedRegion& r : regions) ExpectTouchedPagesResident(r, r.pid == pid ? *main_snap : *child_snap);
  // The snapshot was read during the pause, on this test's clock.
  EXPECT_GE(main_snap->time, paused_seen);
  EXPECT_LE(main_snap->end_time, release_at);
  EXPECT_LE(main_snap->time, main_snap->end_time);

  // TRACE.rss against the trace.
  session::SessionOptions o;
  o.path = trace;
  o.preload_symbols = false;
  auto loaded = session::Session::Open(o);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const index::TraceIndex& idx = (*loaded)->index();
  for (const perf::EventAttr& a : (*loaded)->info().attrs) {
    ASSERT_TRUE(a.clockid.has_value()) << a.name;  // perf -k mono: every event
    EXPECT_EQ(*a.clockid, CLOCK_MONOTONIC) << a.name;
  }
  const residency::TraceFacts facts = (*loaded)->Facts();
  const index::Process* command = nullptr;
  for (size_t i = 0; i < idx.num_processes(); ++i) {
    if (idx.process(i).pid == pid) command = &idx.process(i);
  }
  ASSERT_NE(command, nullptr);
  absl::StatusOr<residency::ResidencyIndex> r = residency::ResidencyIndex::Load(trace + ".rss", facts);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GE(r->Of(pid).size(), 3u);  // periodic ones (0.5 s of pause), the requested, the exit
  EXPECT_GE(r->Of(child).size(), 2u);
  // The index finds the requested snapshot by its time (periodic ones may
  // follow it during the pause).
  const ResidencySnapshot* at_request = r->At(pid, main_snap->time);
  ASSERT_NE(at_request, nullptr);
  EXPECT_EQ(at_request->reason, SnapshotReason::kRequested);
  EXPECT_EQ(at_request->present.ranges(), main_snap->present.ranges());
  // The last is the exit snapshot: after the command's last memory call and
  // before its exit record, its memory whole (the regions still resident).
  const ResidencySnapshot& last = r->Of(pid).back();
  EXPECT_EQ(last.reason, SnapshotReason::kExit);
  uint64_t last_call = 0;
  for (size_t i = 0; i < idx.num_events(); ++i) {
    const index::CallEvent& e = idx.event(EventId(static_cast<uint32_t>(i)));
    if (e.pid == pid) last_call = std::max(last_call, e.last_time);
  }
  EXPECT_GT(last.time, last_call);
  ASSERT_NE(command->t_exit, index::kEndOfTrace);
  EXPECT_LT(last.end_time, command->t_exit);
  const TouchedRegion& every4th = regions[0];
  ASSERT_EQ(every4th.name, "every4th");
  EXPECT_EQ(last.ResidentBytes(every4th.start, every4th.end), every4th.touched * 4096);
  // The thread's madvise of its stack at its end, after the release: a
  // trace event after the requested snapshot, on the same clock.
  bool event_after_release = false;
  for (size_t i = 0; i < idx.num_events(); ++i) {
    const index::CallEvent& e = idx.event(EventId(static_cast<uint32_t>(i)));
    if (e.pid == pid && e.first_time > main_snap->end_time) event_after_release = true;
    if (e.pid == pid) {
      EXPECT_FALSE(e.first_time > main_snap->time && e.first_time < main_snap->end_time);
    }
  }
  EXPECT_TRUE(event_after_release);
}

}  // namespace
}  // namespace pageblame::testing

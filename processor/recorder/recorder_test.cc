// The recorder's pieces on this machine's real processes: the process table,
// the snapshot file as written and read back, snapshots of this test's own
// memory, and the exit tracer on a child that plays perf (it forks the
// "command" and waits for it, as perf does).
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/temp_dir_for_test.h"
#include "processor/heap/heap_snapshot_file.h"
#include "processor/recorder/debugger_watch.h"
#include "processor/recorder/exit_tracer.h"
#include "processor/recorder/perf_run.h"
#include "processor/recorder/recorded_processes.h"
#include "processor/recorder/snapshot_taker.h"
#include "processor/recorder/snapshot_writer.h"
#include "processor/residency/pagemap_sampler.h"
#include "processor/residency/snapshot_file.h"

namespace pageblame::recorder {
namespace {

using residency::SnapshotReason;
using ::testing::ElementsAre;

void WriteFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), {});
}


TEST(ParseStatTest, FieldsAfterTheLastParenthesis) {
  // A command name may hold spaces and parentheses.
  const std::string stat = "4242 (a) b (c) S 17 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 0 0";
  std::optional<ProcessRow> row = ParseStat(stat);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->pid, 4242u);
  EXPECT_EQ(row->ppid, 17u);
  EXPECT_EQ(row->state, 'S');
  EXPECT_EQ(row->start, 987654u);
  EXPECT_FALSE(ParseStat("4242 (a) S 17").has_value());  // cut short
  EXPECT_FALSE(ParseStat("").has_value());
  // This process's own row, from the kernel.
  std::optional<ProcessRow> self = ParseStat(ReadFile("/proc/self/stat"));
  ASSERT_TRUE(self.has_value());
  EXPECT_EQ(self->ppid, static_cast<uint32_t>(getppid()));
}

TEST(RecordedProcessesTest, TheCommandOnceExecdAndItsDescendants) {
  RecordedProcesses procs = RecordedProcesses::ForCommand(100);
  // perf (100) has forked the command (101), which still runs perf's code.
  std::vector<ProcessRow> table = {{1, 0, 1}, {100, 50, 10}, {101, 100, 11, /*runs_perf=*/true}, {7, 1, 5}};
  EXPECT_TRUE(procs.Update(table).empty());
  // It has exec'd and forked 102, which forked 103.
  table[2].runs_perf = false;
  table.push_back({102, 101, 12});
  table.push_back({103, 102, 13});
  EXPECT_THAT(procs.Update(table), ElementsAre(101, 102, 103));
  // 102 exits; 103 is reparented to init and still followed. 101's pid is
  // reused by an unrelated process (another start time): not followed.
  table = {{1, 0, 1}, {100, 50, 10}, {101, 1, 99}, {103, 1, 13}, {7, 1, 5}};
  EXPECT_THAT(procs.Update(table), ElementsAre(103));
}

TEST(RecordedProcessesTest, TheAttachedProcessAndItsChildren) {
  RecordedProcesses procs = RecordedProcesses::ForAttach(200);
  std::vector<ProcessRow> table = {{1, 0, 1}, {200, 1, 20}, {201, 200, 21}, {300, 1, 30}};
  EXPECT_THAT(procs.Update(table), ElementsAre(200, 201));
  EXPECT_TRUE(procs.Update({{1, 0, 1}}).empty());  // all gone
}

TEST(RecordedProcessesTest, ReadsTheLiveTable) {
  const pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  ASSERT_GT(child, 0);
  EXPECT_THAT(RecordedProcesses::ForAttach(getpid()).Update(), ::testing::Contains(static_cast<uint32_t>(child)));
  EXPECT_THAT(ChildrenOf(getpid()), ::testing::Contains(static_cast<uint32_t>(child)));
  // A fork runs its parent's executable until it execs another.
  EXPECT_TRUE(RunsExecutableOf(child, getpid()));
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  const pid_t other = fork();
  if (other == 0) {
    execl("/bin/sleep", "sleep", "10", nullptr);
    _exit(127);
  }
  for (int i = 0; i < 200 && RunsExecutableOf(other, getpid()); ++i) usleep(5000);
  EXPECT_FALSE(RunsExecutableOf(other, getpid()));
  kill(other, SIGKILL);
  waitpid(other, nullptr, 0);
}

// A snapshot of this process: its pages as the kernel has them.
residency::ResidencySnapshot SnapshotOfSelf(SnapshotReason reason) {
  residency::PagemapSampler sampler;
  absl::StatusOr<residency::ResidencySnapshot> s = sampler.Take(getpid(), reason);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : residency::ResidencySnapshot();
}

TEST(SnapshotWriterTest, RecordsReadBackAsWritten) {
  TempDir dir("pb_recorder");
  const std::string path = dir.path() + "/t.data.rss";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND, 0600);
  ASSERT_GE(fd, 0);
  absl::StatusOr<std::unique_ptr<SnapshotWriter>> w = SnapshotWriter::Create(fd, path, CLOCK_MONOTONIC);
  ASSERT_TRUE(w.ok()) << w.status();
  const residency::ResidencySnapshot a = SnapshotOfSelf(SnapshotReason::kPeriodic);
  const residency::ResidencySnapshot b = SnapshotOfSelf(SnapshotReason::kRequested);
  ASSERT_TRUE((*w)->Append(a).ok());
  ASSERT_TRUE((*w)->Append(b).ok());
  absl::StatusOr<residency::SnapshotFile> f = residency::ReadSnapshotFile(path);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->clockid, CLOCK_MONOTONIC);
  ASSERT_EQ(f->snapshots.size(), 2u);
  EXPECT_EQ(f->snapshots[1].reason, SnapshotReason::kRequested);
  EXPECT_EQ(f->snapshots[0].present.ranges(), a.present.ranges());
  EXPECT_EQ(f->snapshots[1].read.ranges(), b.read.ranges());
  EXPECT_EQ(f->snapshots[0].time, a.time);
}

// record --max-size: a writer thinning by age keeps its file within the
// budget however many records come, and the file reads back whole: the
// first and the newest records, times in order.
TEST(SnapshotWriterTest, ThinsByAgeWithinItsBudget) {
  TempDir dir("pb_recorder");
  const std::string path = dir.path() + "/t.data.rss";
  const int dir_fd = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dir_fd, 0);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_APPEND, 0600);
  ASSERT_GE(fd, 0);
  absl::StatusOr<std::unique_ptr<SnapshotWriter>> w = SnapshotWriter::Create(fd, path, CLOCK_MONOTONIC);
  ASSERT_TRUE(w.ok()) << w.status();
  residency::ResidencySnapshot s = SnapshotOfSelf(SnapshotReason::kPeriodic);
  const uint64_t record = residency::EncodeSnapshot(s).size();
  const uint64_t budget = 200 * record;
  (*w)->ThinWithin({dir_fd, "t.data.rss", budget});
  const uint64_t second = 1000000000, first_time = 5 * second;
  const int n = 3 * 360;  // three hours, one every 10 s
  for (int i = 0; i < n; ++i) {
    s.time = first_time + static_cast<uint64_t>(i) * 10 * second;
    s.end_time = s.time + 1;
    ASSERT_TRUE((*w)->Append(s).ok());
    struct stat st;
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    ASSERT_LE(static_cast<uint64_t>(st.st_size), budget + record) << "after record " << i;
  }
  const SnapshotWriter::ThinSummary t = (*w)->Thinned();
  EXPECT_TRUE(t.error.empty()) << t.error;
  EXPECT_EQ(t.records, static_cast<uint64_t>(n));
  EXPECT_GT(t.dropped, 0u);
  EXPECT_GT(t.rewrites, 0u);
  absl::StatusOr<residency::SnapshotFile> f = residency::ReadSnapshotFile(path);
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->snapshots.size(), t.records - t.dropped);
  EXPECT_EQ(f->snapshots.front().time, first_time);
  EXPECT_EQ(f->snapshots.back().time, s.time);
  for (size_t i = 1; i < f->snapshots.size(); ++i) EXPECT_LT(f->snapshots[i - 1].time, f->snapshots[i].time);
  EXPECT_EQ(f->snapshots.back().present.ranges(), s.present.ranges());
  EXPECT_NE(::access((path + ".thin").c_str(), F_OK), 0);  // no temporary file left
  ::close(dir_fd);
}

// The recording's files, made in `dir` as record makes them.
std::unique_ptr<RecordingFiles> FilesIn(const TempDir& dir) {
  absl::StatusOr<std::unique_ptr<RecordingFiles>> f = RecordingFiles::Prepare(dir.path() + "/t.data", false);
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? *std::move(f) : nullptr;
}

TEST(SnapshotTakerTest, TakesTouchedPagesAndSkipsTheGone) {
  TempDir dir("pb_recorder");
  const std::string trace = dir.path() + "/t.data";
  const size_t len = 8 << 20;
  char* p = static_cast<char*>(mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(p, MAP_FAILED);
  for (size_t off = 0; off < len; off += 2 * 4096) p[off] = 1;  // every other page
  const uint64_t start = reinterpret_cast<uint64_t>(p);

  pid_t gone = fork();
  if (gone == 0) _exit(0);
  waitpid(gone, nullptr, 0);
  std::unique_ptr<RecordingFiles> files = FilesIn(dir);
  SnapshotTaker taker(files.get(), CLOCK_MONOTONIC);
  EXPECT_EQ(taker.Take({static_cast<uint32_t>(getpid()), static_cast<uint32_t>(gone)}, SnapshotReason::kStop), 1u);
  const TakerSummary s = taker.Summary();
  EXPECT_EQ(s.path, trace + ".rss");
  EXPECT_EQ(s.snapshots, 1u);
  EXPECT_TRUE(s.error.empty()) << s.error;
  ASSERT_EQ(s.processes.size(), 1u);
  EXPECT_EQ(s.processes[0].pid, static_cast<uint32_t>(getpid()));
  EXPECT_EQ(s.processes[0].reason, SnapshotReason::kStop);
  EXPECT_FALSE(s.processes[0].comm.empty());

  absl::StatusOr<residency::SnapshotFile> f = residency::ReadSnapshotFile(trace + ".rss");
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->snapshots.size(), 1u);
  EXPECT_EQ(f->snapshots[0].ResidentBytes(start, start + len), len / 2);
  EXPECT_TRUE(f->snapshots[0].Covers(start, start + len));
  munmap(p, len);
}

// Each residency snapshot of a glibc process brings a heap snapshot of the
// same moment into TRACE.heap (made new, 0600); a periodic walk right after
// another is skipped (walks take at most a quarter of the loop's time),
// a stop snapshot always walks.
TEST(SnapshotTakerTest, WalksTheHeapIntoTheHeapFile) {
  TempDir dir("pb_recorder");
  const std::string trace = dir.path() + "/t.data";
  std::unique_ptr<RecordingFiles> files = FilesIn(dir);
  SnapshotTaker taker(files.get(), CLOCK_MONOTONIC);
  const uint32_t self = static_cast<uint32_t>(getpid());
  EXPECT_EQ(taker.Take({self}, SnapshotReason::kPeriodic), 1u);
  EXPECT_EQ(taker.Take({self}, SnapshotReason::kPeriodic), 1u);
  EXPECT_EQ(taker.Take({self}, SnapshotReason::kStop), 1u);
  const TakerSummary s = taker.Summary();
  EXPECT_EQ(s.heap.path, trace + ".heap");
  EXPECT_TRUE(s.heap.error.empty()) << s.heap.error;
  EXPECT_TRUE(s.heap.notes.empty());
  EXPECT_EQ(s.heap.snapshots, 2u);
  EXPECT_EQ(s.heap.skipped, 1u);
  EXPECT_GT(s.heap.walk_seconds_max, 0.0);
  struct stat st;
  ASSERT_EQ(::lstat((trace + ".heap").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), heap::kHeapFileHeaderSize + s.heap.bytes);

  absl::StatusOr<heap::HeapSnapshotFile> f = heap::ReadHeapSnapshotFile(trace + ".heap");
  ASSERT_TRUE(f.ok()) << f.status();
  absl::StatusOr<residency::SnapshotFile> rss = residency::ReadSnapshotFile(trace + ".rss");
  ASSERT_TRUE(rss.ok()) << rss.status();
  ASSERT_EQ(f->snapshots.size(), 2u);
  ASSERT_EQ(rss->snapshots.size(), 3u);
  EXPECT_EQ(f->clockid, CLOCK_MONOTONIC);
  for (size_t i = 0; i < 2; ++i) {
    const heap::HeapSnapshot& h = f->snapshots[i];
    EXPECT_EQ(h.pid, self);
    EXPECT_EQ(h.allocator, heap::Allocator::kGlibc);
    ASSERT_FALSE(h.arenas.empty());
    EXPECT_TRUE(h.arenas[0].main);
    EXPECT_GT(h.arenas[0].figures.system_bytes, 0u);
    // Resident figures from the residency snapshot of the same moment.
    EXPECT_TRUE(h.arenas[0].figures.free_resident_bytes.has_value());
    // Stamped after its residency snapshot (the first and the stop one).
    ASSERT_TRUE(h.time.has_value());
    EXPECT_GE(*h.time, rss->snapshots[i == 0 ? 0 : 2].time);
  }
}

// Once a process's exit snapshot is written, the process is let go and its
// memory torn down: a periodic or stop snapshot of it after that would read
// pages going away and, being later, speak for its end. None is written.
TEST(SnapshotTakerTest, NothingFollowsAnExitSnapshot) {
  TempDir dir("pb_recorder");
  std::unique_ptr<RecordingFiles> files = FilesIn(dir);
  SnapshotTaker taker(files.get(), CLOCK_MONOTONIC);
  const uint32_t self = static_cast<uint32_t>(getpid());
  EXPECT_EQ(taker.Take({self}, SnapshotReason::kPeriodic), 1u);
  EXPECT_EQ(taker.Take({self}, SnapshotReason::kExit), 1u);
  EXPECT_EQ(taker.Take({self}, SnapshotReason::kPeriodic), 0u);
  EXPECT_EQ(taker.Take({self}, SnapshotReason::kStop), 0u);
  const TakerSummary s = taker.Summary();
  EXPECT_EQ(s.snapshots, 2u);
  ASSERT_EQ(s.processes.size(), 1u);
  EXPECT_EQ(s.processes[0].reason, SnapshotReason::kExit);
}

// Pages made inaccessible after they were touched stay resident, in a range
// a snapshot does not read: its sum falls short of smaps_rollup's Rss.
TEST(SnapshotTakerTest, ResidentPagesBehindProtNoneAreAMismatch) {
  TempDir dir("pb_recorder");
  const size_t len = 64 << 20;
  char* p = static_cast<char*>(mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(p, MAP_FAILED);
  memset(p, 1, len);
  std::unique_ptr<RecordingFiles> files = FilesIn(dir);
  SnapshotTaker taker(files.get(), CLOCK_MONOTONIC);
  ASSERT_EQ(taker.Take({static_cast<uint32_t>(getpid())}, SnapshotReason::kPeriodic), 1u);
  EXPECT_FALSE(taker.Summary().mismatch.has_value());
  ASSERT_EQ(mprotect(p, len, PROT_NONE), 0);
  ASSERT_EQ(taker.Take({static_cast<uint32_t>(getpid())}, SnapshotReason::kPeriodic), 1u);
  const TakerSummary s = taker.Summary();
  ASSERT_TRUE(s.mismatch.has_value());
  EXPECT_EQ(s.mismatch->pid, static_cast<uint32_t>(getpid()));
  EXPECT_GE(s.mismatch->rollup_rss, s.mismatch->resident + len);
  munmap(p, len);
}

// A file put at TRACE.rss after the recording began is not the recording's:
// never written into, said once.
TEST(SnapshotTakerTest, AnUnwritableFileIsSaidOnce) {
  TempDir dir("pb_recorder");
  std::unique_ptr<RecordingFiles> files = FilesIn(dir);
  WriteFile(dir.path() + "/t.data.rss", "planted");
  SnapshotTaker taker(files.get(), CLOCK_MONOTONIC);
  EXPECT_EQ(taker.Take({static_cast<uint32_t>(getpid())}, SnapshotReason::kPeriodic), 0u);
  EXPECT_EQ(taker.Take({static_cast<uint32_t>(getpid())}, SnapshotReason::kPeriodic), 0u);
  const TakerSummary s = taker.Summary();
  EXPECT_EQ(s.snapshots, 0u);
  EXPECT_THAT(s.error, ::testing::HasSubstr(dir.path() + "/t.data.rss appeared after the recording began"));
  EXPECT_EQ(ReadFile(dir.path() + "/t.data.rss"), "planted");
}

// What the "command" does in the exit tracer tests (kLinger: returns after
// 2 s, time for a debugger to attach).
enum class Ending { kReturn, kSigterm, kLinger };

std::atomic<int> g_usr2_seen{0};
void OnUsr2(int) { ++g_usr2_seen; }

// A child that plays perf: forks the command, which waits for perf's word
// (a pipe, as perf's go pipe), then maps and writes 8 MiB, signals itself
// (SIGUSR2, which it handles: a tracer must deliver it), and ends as told;
// perf exits with the command's status as its code.
pid_t StartFakePerf(Ending ending) {
  const pid_t perf = fork();
  if (perf != 0) return perf;
  int go[2];
  if (pipe(go) != 0) _exit(100);
  const pid_t command = fork();
  if (command == 0) {
    close(go[1]);
    char c;
    if (read(go[0], &c, 1) != 1) _exit(101);
    signal(SIGUSR2, OnUsr2);
    char* p = static_cast<char*>(mmap(nullptr, 8 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    memset(p, 1, 8 << 20);
    raise(SIGUSR2);
    if (g_usr2_seen != 1) _exit(102);
    if (ending == Ending::kSigterm) raise(SIGTERM);
    if (ending == Ending::kLinger) usleep(2000 * 1000);
    _exit(7);
  }
  usleep(200 * 1000);  // perf's setup, while the command waits
  if (write(go[1], "g", 1) != 1) _exit(103);
  int status;
  waitpid(command, &status, 0);
  _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

// The exit snapshot sees the command's memory whole; the command's signals
// still reach it; perf sees its child end as without a tracer.
TEST(ExitTracerTest, SnapshotAtTheExitWithMemoryWhole) {
  for (Ending ending : {Ending::kReturn, Ending::kSigterm}) {
    SCOPED_TRACE(ending == Ending::kReturn ? "exit" : "SIGTERM");
    const pid_t perf = StartFakePerf(ending);
    ASSERT_GT(perf, 0);
    std::vector<uint32_t> exited;
    uint64_t resident = 0;
    std::string note;
    const int status = ExitTracer::Supervise(
        perf,
        [&](uint32_t pid) {
          exited.push_back(pid);
          residency::PagemapSampler sampler;
          absl::StatusOr<residency::ResidencySnapshot> s = sampler.Take(pid, SnapshotReason::kExit);
          if (s.ok()) resident = s->present.total();
        },
        &note);
    // Traced (a note may say that debuggers could not be watched for).
    EXPECT_THAT(note, ::testing::Not(::testing::HasSubstr("cannot trace"))) << note;
    EXPECT_EQ(note.empty(), DebuggerWatch::Works()) << note;
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), ending == Ending::kReturn ? 7 : 128 + SIGTERM);
    ASSERT_EQ(exited.size(), 1u);
    EXPECT_GE(resident, uint64_t{8} << 20);
  }
}

// A debugger of the command (here python3 named gdb, given the command's pid:
// it attaches with PTRACE_ATTACH, as gdb -p does) gets it: the tracer lets
// the command go when the "gdb" execs, and takes it back once that has
// ended, for the exit snapshot. Needs the process events connector (root).
TEST(ExitTracerTest, ADebuggerOfTheCommandGetsItAndTheExitSnapshotStillComes) {
  if (!DebuggerWatch::Works()) GTEST_SKIP() << "no process events here (not root, or another network namespace)";
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3 to play gdb";
  TempDir dir("pb_debugger");
  const std::string gdb = dir.path() + "/gdb";
  ASSERT_EQ(::symlink("/usr/bin/python3", gdb.c_str()), 0);
  const pid_t perf = StartFakePerf(Ending::kLinger);
  ASSERT_GT(perf, 0);
  // perf's child is the command; the fake gdb starts once it runs.
  pid_t command = 0;
  for (int i = 0; i < 1000 && command == 0; ++i) {
    const std::vector<uint32_t> kids = ChildrenOf(static_cast<uint32_t>(perf));
    if (!kids.empty()) command = static_cast<pid_t>(kids.front());
    usleep(1000);
  }
  ASSERT_GT(command, 0);
  const pid_t debugger = fork();
  if (debugger == 0) {
    usleep(500 * 1000);  // the tracer has seized the command by now
    static const char kAttach[] =
        "import ctypes, os, sys, time\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "pid = int(sys.argv[1])\n"
        "for _ in range(300):\n"
        "    if libc.ptrace(16, pid, None, None) == 0:\n"  // PTRACE_ATTACH
        "        os.waitpid(pid, 0x40000000)\n"            // __WALL
        "        libc.ptrace(17, pid, None, None)\n"       // PTRACE_DETACH
        "        sys.exit(0)\n"
        "    time.sleep(0.001)\n"
        "sys.exit(1)\n";
    const std::string pid = std::to_string(command);
    execl(gdb.c_str(), "gdb", "-c", kAttach, pid.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::vector<uint32_t> exited;
  std::string note;
  const int status = ExitTracer::Supervise(perf, [&](uint32_t pid) { exited.push_back(pid); }, &note);
  int debugger_status = 0;
  ASSERT_EQ(waitpid(debugger, &debugger_status, 0), debugger);
  EXPECT_TRUE(WIFEXITED(debugger_status) && WEXITSTATUS(debugger_status) == 0) << "the fake gdb could not attach";
  EXPECT_TRUE(note.empty()) << note;
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);
  EXPECT_EQ(exited, std::vector<uint32_t>{static_cast<uint32_t>(command)}) << "traced again after the debugger";
}

TEST(ExitTracerTest, WithoutAHookItOnlyWaits) {
  const pid_t perf = StartFakePerf(Ending::kReturn);
  std::string note;
  const int status = ExitTracer::Supervise(perf, nullptr, &note);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);
}

// record --max-size gives perf a priority of its own once it records
// (RecordPlan::PerfNice): a shell plays perf and writes down the nice the
// kernel gives it (/proc/self/stat's 19th field) after the recorder had
// time to set it. A lower priority than this test's own, which anyone may
// ask for; 0 leaves it as it was.
std::string NiceOfFakePerf(const TempDir& dir, int perf_nice) {
  const std::string out = dir.path() + "/nice";
  PerfRunOptions o;
  o.argv = {"/bin/sh", "-c", "sleep 0.3; cut -d' ' -f19 /proc/$$/stat > " + out};
  o.rss_every = 0;
  o.perf_nice = perf_nice;
  const PerfRunResult r = RunPerf(o);
  EXPECT_EQ(r.perf_exit, 0);
  EXPECT_TRUE(r.perf_recorded);
  EXPECT_EQ(r.perf_nice_error, "");
  return ReadFile(out);
}

TEST(RunPerfTest, PerfGetsItsNiceOnceItRecords) {
  TempDir dir("pb_recorder");
  errno = 0;
  const int own = ::getpriority(PRIO_PROCESS, 0);
  ASSERT_EQ(errno, 0);
  if (own >= 19) GTEST_SKIP() << "this test runs at nice 19 already: no lower priority to give";
  const int lower = std::min(own + 5, 19);
  EXPECT_EQ(NiceOfFakePerf(dir, lower), std::to_string(lower) + "\n");
  EXPECT_EQ(NiceOfFakePerf(dir, 0), std::to_string(own) + "\n");
}

}  // namespace
}  // namespace pageblame::recorder

// What --pid and "no --pid" name in a session: the process entries of a
// real trace as its recording says they were (traces/manifest.tsv: a main
// process, its fork child, its fork+exec child), every entry of a reused
// pid in start order, and in a system-wide recording the processes that made
// memory calls, with a note.
#include <sys/mman.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/replay/call_events_for_test.h"
#include "processor/replay/replayer.h"
#include "processor/replay/trace_loader.h"
#include "processor/session/selection.h"
#include "processor/session/session.h"
#include "processor/symbols/symbolizer_for_test.h"
#include "tests/trace_fixtures.h"

namespace pageblame::session {
namespace {

using ::testing::HasSubstr;

TEST(SelectionOfRealTraceTest, EveryProcessTheRecordingMadeWithItsParentAndExec) {
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Open(testing::TraceSessionOptions("rules-trace.data"));
  ASSERT_TRUE(s.ok()) << s.status();
  const index::TraceIndex& idx = (*s)->index();
  std::vector<testing::ManifestRow> rows;
  for (const testing::ManifestRow& r : testing::ReadManifest()) {
    if (r["trace"] == "rules-trace.data") rows.push_back(r);
  }
  ASSERT_EQ(rows.size(), 3u);  // main, fork child, fork+exec child
  const std::vector<uint32_t> all = DefaultProcesses(**s);
  ASSERT_EQ(all.size(), rows.size());
  absl::StatusOr<Selection> none = Resolve({std::nullopt, TimeSpec{}}, **s, PeakOf::kMapped);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->processes, all);
  EXPECT_FALSE(none->pid.has_value());
  EXPECT_EQ(none->at, index::kEndOfTrace);
  for (size_t i = 0; i < rows.size(); ++i) {
    const uint32_t pid = std::stoul(rows[i]["pid"]);
    SCOPED_TRACE(rows[i]["role"]);
    const index::Process& proc = idx.process(all[i]);
    EXPECT_EQ(proc.pid, pid);  // by pid, as the manifest lists them
    if (!rows[i]["parent"].empty()) {
      EXPECT_EQ(proc.ppid, std::stoul(rows[i]["parent"]));
      EXPECT_GT(proc.t_start, idx.process(all[0]).t_start);
    }
    if (rows[i]["role"] == "fork child") {
      EXPECT_FALSE(proc.saw_exec);
    }
    if (rows[i]["role"] == "fork+exec child") {
      EXPECT_TRUE(proc.saw_exec && proc.t_exec > proc.t_start);
    }
    absl::StatusOr<Selection> one = Resolve({pid, TimeSpec{}}, **s, PeakOf::kMapped);
    ASSERT_TRUE(one.ok()) << one.status();
    EXPECT_EQ(one->pid, pid);
    EXPECT_EQ(one->processes, idx.ProcessesWithPid(pid));
    EXPECT_THAT(one->notes, ::testing::IsEmpty());
  }
}

// A session over a hand-made replay: `build` applies its events.
std::unique_ptr<Session> HandMade(const std::function<void(replay::Replayer&, index::TraceIndex&)>& build,
                                  perf::FileInfo info = {}) {
  auto idx = std::make_unique<index::TraceIndex>();
  replay::Replayer replayer(idx.get(), nullptr);
  build(replayer, *idx);
  replayer.Finish();
  idx->Finalize();
  SessionOptions o;
  o.path = "hand-made.data";
  o.residency.off = true;
  auto trace = std::make_unique<replay::LoadedTrace>(
      std::move(idx), std::make_unique<symbols::SymbolizerWithMaps>(symbols::SymbolizerOptions{}), std::move(info), "");
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Of(std::move(trace), o);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

void Mmap(replay::Replayer& r, uint64_t t, uint32_t pid, uint64_t addr) {
  auto [in, out] = replay::CallEvents(t, pid, pid, decode::Syscall::kMmap,
                                      {addr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                                       ~0ull, 0},
                                      static_cast<int64_t>(addr));
  r.Apply(in);
  r.Apply(out);
}

void Task(replay::Replayer& r, replay::TraceEvent::Kind kind, uint64_t t, uint32_t pid, uint32_t ppid) {
  replay::TraceEvent e(kind);
  e.time = t;
  e.pid = e.tid = pid;
  e.task().ppid = e.task().ptid = ppid;
  r.Apply(e);
}

// Pid 5 exits and the kernel gives its number to a later child.
TEST(SelectionTest, AReusedPidNamesEachOfItsProcessesInStartOrder) {
  std::unique_ptr<Session> s = HandMade([](replay::Replayer& r, index::TraceIndex&) {
    Mmap(r, 10, 1, 0x10000000);
    Task(r, replay::TraceEvent::Kind::kFork, 20, 5, 1);
    Mmap(r, 30, 5, 0x20000000);
    Task(r, replay::TraceEvent::Kind::kTaskExit, 40, 5, 1);
    Task(r, replay::TraceEvent::Kind::kFork, 50, 5, 1);
    Mmap(r, 60, 5, 0x30000000);
  });
  ASSERT_NE(s, nullptr);
  const index::TraceIndex& idx = s->index();
  absl::StatusOr<Selection> five = Resolve({5, TimeSpec{}}, *s, PeakOf::kMapped);
  ASSERT_TRUE(five.ok()) << five.status();
  ASSERT_EQ(five->processes.size(), 2u);
  EXPECT_LT(idx.process(five->processes[0]).t_start, idx.process(five->processes[1]).t_start);
  EXPECT_EQ(idx.process(five->processes[0]).t_exit, 40u);
  EXPECT_EQ(idx.process(five->processes[1]).t_exit, index::kEndOfTrace);
  // No pid: every entry, by pid, then start.
  const std::vector<uint32_t> all = DefaultProcesses(*s);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(idx.process(all[0]).pid, 1u);
  EXPECT_EQ(std::vector<uint32_t>(all.begin() + 1, all.end()), five->processes);
  EXPECT_EQ(PidList(idx), "1, 5");
}

// perf record -a lists every process of the machine at its start (record
// -p of a process alone in its cgroup): those without a memory call are
// left out unless asked for, and a note says so.
TEST(SelectionTest, ASystemWideRecordingShowsTheProcessesWithMemoryCalls) {
  auto build = [](replay::Replayer& r, index::TraceIndex& idx) {
    Mmap(r, 10, 1, 0x10000000);
    replay::TraceEvent m(replay::TraceEvent::Kind::kMmap);  // pid 2: only perf's synthesized mapping
    m.time = 5;
    m.pid = m.tid = 2;
    m.mmap().start = 0x400000;
    m.mmap().len = 0x1000;
    m.mmap().prot = PROT_READ | PROT_EXEC;
    m.mmap().has_prot = true;
    m.mmap().filename = idx.strings().Intern("/usr/sbin/sshd");
    r.Apply(m);
  };
  perf::FileInfo system_wide;
  system_wide.cmdline = {"/usr/bin/perf", "record", "-a", "-G", "system.slice/shop.service"};
  std::unique_ptr<Session> s = HandMade(build, system_wide);
  ASSERT_NE(s, nullptr);
  const index::TraceIndex& idx = s->index();
  ASSERT_EQ(idx.num_processes(), 2u);
  const std::vector<uint32_t> shown = DefaultProcesses(*s);
  ASSERT_EQ(shown.size(), 1u);
  EXPECT_EQ(idx.process(shown[0]).pid, 1u);
  absl::StatusOr<Selection> none = Resolve({std::nullopt, TimeSpec{}}, *s, PeakOf::kMapped);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->processes, shown);
  EXPECT_THAT(none->notes, ::testing::ElementsAre(HasSubstr(
                               "note: a system-wide recording: the 1 process entries with memory calls are shown, not "
                               "the 1 others perf listed at its start (--pid PID shows any one)")));
  absl::StatusOr<Selection> two = Resolve({2, TimeSpec{}}, *s, PeakOf::kMapped);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->processes, idx.ProcessesWithPid(2));
  EXPECT_THAT(two->notes, ::testing::IsEmpty());
  // The same processes recorded per thread (-p): all of them.
  perf::FileInfo per_thread;
  per_thread.cmdline = {"/usr/bin/perf", "record", "-p", "1"};
  std::unique_ptr<Session> p = HandMade(build, per_thread);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(DefaultProcesses(*p).size(), 2u);
}

}  // namespace
}  // namespace pageblame::session

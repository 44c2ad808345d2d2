// The command line's pieces without a trace: exit codes, "did you mean",
// the perf command `record` runs, and every command's help
// naming every option its parser accepts.
#include <csignal>
#include <functional>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/cli/child_process.h"
#include "processor/cli/command_registry.h"
#include "processor/cli/record_plan.h"
#include "processor/cli/usage.h"

namespace pageblame::cli {
namespace {

using ::testing::HasSubstr;

TEST(UsageTest, OnlyMarkedErrorsAreUsageErrors) {
  EXPECT_EQ(ExitCodeFor(absl::OkStatus()), 0);
  EXPECT_EQ(ExitCodeFor(UsageError("bad --pid")), 2);
  // A reader's InvalidArgument is bad input, not a usage mistake.
  EXPECT_EQ(ExitCodeFor(absl::InvalidArgumentError("trace.data: bad magic")), 1);
  EXPECT_EQ(ExitCodeFor(absl::DataLossError("truncated")), 1);
}

TEST(UsageTest, DidYouMeanNamesCloseSpellingsOnly) {
  const std::vector<std::string> flags = {"--history", "--json", "--pid", "--at"};
  EXPECT_EQ(Closest("--histroy", flags), "--history");
  EXPECT_EQ(Closest("--jsno", flags), "--json");
  EXPECT_EQ(Closest("--verbose", flags), "");
  EXPECT_EQ(DidYouMean("mpas", {"maps", "query", "diff"}), " (did you mean maps?)");
  EXPECT_EQ(DidYouMean("frobnicate", {"maps", "query"}), "");
}

// An exception that escapes a command is one line and exit 1, never an
// abort (docs/cli.md).
TEST(UsageTest, AnEscapingExceptionIsOneLineAndExitOne) {
  auto run = [](const std::function<int()>& f) {
    ::testing::internal::CaptureStderr();
    const int rc = RunGuarded(f);
    return std::make_pair(rc, ::testing::internal::GetCapturedStderr());
  };
  EXPECT_EQ(run([] { return 2; }), std::make_pair(2, std::string()));
  EXPECT_EQ(run([]() -> int { throw std::bad_alloc(); }),
            std::make_pair(1, std::string("pageblame: out of memory (the input is larger than this machine's memory "
                                          "or limit)\n")));
  EXPECT_EQ(run([]() -> int { throw std::runtime_error("boom"); }),
            std::make_pair(1, std::string("pageblame: internal error: boom\n")));
  EXPECT_EQ(run([]() -> int { throw 7; }),
            std::make_pair(1, std::string("pageblame: internal error: an unknown exception\n")));
}

TEST(ChildProcessTest, FindsProgramsAsExecvpAndCollectsWhatTheyPrint) {
  EXPECT_EQ(ChildProcess::FindInPath("/bin/sh"), "/bin/sh");
  const std::string sh = ChildProcess::FindInPath("sh");
  EXPECT_FALSE(sh.empty());
  EXPECT_EQ(sh.front(), '/');
  EXPECT_EQ(ChildProcess::FindInPath("pageblame-no-such-program"), "");
  EXPECT_EQ(ChildProcess::FindInPath("/nonexistent/sh"), "");
  absl::StatusOr<ChildProcess::Result> r = ChildProcess::Run({"sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
  absl::StatusOr<ChildProcess::Result> killed = ChildProcess::Run({"sh", "-c", "kill -TERM $$"});
  ASSERT_TRUE(killed.ok()) << killed.status();
  EXPECT_EQ(killed->exit_code, 128 + SIGTERM);
  // One that cannot be started: exit 127 (as a shell says it), and why.
  absl::StatusOr<ChildProcess::Result> missing = ChildProcess::Run({"pageblame-no-such-program"});
  ASSERT_TRUE(missing.ok()) << missing.status();
  EXPECT_EQ(missing->exit_code, 127);
  EXPECT_EQ(missing->err, "cannot run pageblame-no-such-program: No such file or directory\n");
}

TEST(RecordPlanTest, DwarfStacksOnTheEntersOnlyWithABigBuffer) {
  RecordPlan plan;
  plan.command = {"./server", "--port", "80"};
  plan.available = {"mmap", "munmap", "brk", "mremap", "mprotect", "madvise"};  // no pkey_mprotect
  const std::string cmd = absl::StrJoin(plan.PerfArgv(), " ");
  EXPECT_THAT(cmd, HasSubstr("-e syscalls:sys_enter_mmap/call-graph=dwarf,stack-size=16384/ "
                             "-e syscalls:sys_exit_mmap/call-graph=no/"));
  EXPECT_THAT(cmd, HasSubstr("syscalls:sys_enter_madvise/"));
  EXPECT_THAT(cmd, ::testing::Not(HasSubstr("pkey_mprotect")));
  // CLOCK_MONOTONIC: the clock the residency snapshots are stamped with.
  EXPECT_THAT(cmd, HasSubstr("-m 128M -z -k mono -o perf.data -- ./server --port 80"));
  EXPECT_EQ(plan.ExtraEnvironment(),
            (std::vector<std::string>{"DOTNET_PerfMapEnabled=1", "DOTNET_PerfMapStubGranularity=2"}));
  EXPECT_EQ(plan.SnapshotPath(), "perf.data.rss");
}

// perf 5.12 brought the `ping` control command (with perf daemon).
TEST(RecordPlanTest, PerfAnswersPingsFrom512) {
  EXPECT_TRUE(RecordPlan::AnswersPing("perf version 6.1.187\n"));
  EXPECT_TRUE(RecordPlan::AnswersPing("perf version 5.12.0"));
  EXPECT_TRUE(RecordPlan::AnswersPing("perf version 5.15.0-91-generic"));
  EXPECT_FALSE(RecordPlan::AnswersPing("perf version 5.11.22"));
  EXPECT_FALSE(RecordPlan::AnswersPing("perf version 4.18.0-513.el8.x86_64"));
  EXPECT_FALSE(RecordPlan::AnswersPing("no perf here"));
  EXPECT_FALSE(RecordPlan::AnswersPing(""));
}

// perf 5.1 brought --no-bpf-event; without a BPF side band perf has no
// thread polling per-thread events it never drops (perf_poll_shim.c).
TEST(RecordPlanTest, NoBpfSideBandWherePerfKnowsTheFlag) {
  EXPECT_TRUE(RecordPlan::KnowsNoBpfEvent("perf version 6.1.187"));
  EXPECT_TRUE(RecordPlan::KnowsNoBpfEvent("perf version 5.1.0"));
  EXPECT_FALSE(RecordPlan::KnowsNoBpfEvent("perf version 5.0.21"));
  EXPECT_FALSE(RecordPlan::KnowsNoBpfEvent("perf version 4.18.0-513.el8.x86_64"));
  EXPECT_FALSE(RecordPlan::KnowsNoBpfEvent(""));
  RecordPlan plan;
  plan.pid = 4242;
  plan.no_bpf_event = true;
  EXPECT_THAT(absl::StrJoin(plan.PerfArgv(), " "), HasSubstr("-m 32M -z --no-bpf-event -k mono -o perf.data -d -p 4242"));
}

TEST(RecordPlanTest, NoSnapshotFileWhenOffOrToAPipe) {
  RecordPlan plan;
  plan.command = {"./a.out"};
  plan.rss_every = 0;
  EXPECT_EQ(plan.SnapshotPath(), "");
  EXPECT_THAT(absl::StrJoin(plan.PerfArgv(), " "), HasSubstr("-k mono"));  // the clock stays
  plan.rss_every = 0.2;
  plan.output = "-";
  EXPECT_EQ(plan.SnapshotPath(), "");
  plan.output = "dir/t.data";
  EXPECT_EQ(plan.SnapshotPath(), "dir/t.data.rss");
}

TEST(RecordPlanTest, AttachAddsDataMappingsAndFpIsSmaller) {
  RecordPlan plan;
  plan.pid = 4242;
  plan.call_graph = RecordPlan::CallGraph::kFp;
  plan.compress = false;
  plan.output = "t.data";
  const std::string cmd = absl::StrJoin(plan.PerfArgv(), " ");
  EXPECT_THAT(cmd, HasSubstr("syscalls:sys_enter_pkey_mprotect/call-graph=fp/"));
  EXPECT_THAT(cmd, HasSubstr("-m 16M -k mono -o t.data -d -p 4242"));
  EXPECT_THAT(cmd, ::testing::Not(HasSubstr("-z")));
  EXPECT_TRUE(plan.ExtraEnvironment().empty());
}

TEST(RecordPlanTest, AnAttachedDwarfRecordingPinsLessThanACommands) {
  RecordPlan plan;
  plan.pid = 4242;
  EXPECT_THAT(absl::StrJoin(plan.PerfArgv(), " "), HasSubstr("-m 32M -z -k mono -o perf.data -d -p 4242"));
  plan.pid.reset();
  plan.command = {"./a.out"};
  EXPECT_STREQ(plan.BufferSize(), "128M");
}

// --max-size: perf cuts its output into chunks of an eighth of it
// (--switch-output takes K), the buffer stays what it was.
TEST(RecordPlanTest, AMaxSizeCutsPerfsOutputIntoEighths) {
  RecordPlan plan;
  plan.command = {"./a.out"};
  EXPECT_THAT(absl::StrJoin(plan.PerfArgv(), " "), ::testing::Not(HasSubstr("--switch-output")));
  ASSERT_TRUE(RecordPlan::ParseSize("4M", &plan.max_size));
  EXPECT_EQ(plan.max_size, uint64_t{4} << 20);
  EXPECT_THAT(absl::StrJoin(plan.PerfArgv(), " "), HasSubstr("-m 128M -z -k mono --switch-output=512K -o perf.data"));
  plan.max_size = 100 << 10;  // the chunk is never below 64 KiB
  EXPECT_THAT(absl::StrJoin(plan.PerfArgv(), " "), HasSubstr("--switch-output=64K"));
  uint64_t v = 0;
  EXPECT_TRUE(RecordPlan::ParseSize("2g", &v));
  EXPECT_EQ(v, uint64_t{2} << 30);
  EXPECT_TRUE(RecordPlan::ParseSize("65536", &v));
  EXPECT_EQ(v, 65536u);
  for (const char* bad : {"", "M", "0", "-1M", "4T", "1.5M", "99999999999G"}) {
    EXPECT_FALSE(RecordPlan::ParseSize(bad, &v)) << bad;
  }
}

// --max-size: perf's cuts stall it (record_plan.cc), so it gets the CPU
// before the command, the folding and the rest of the machine once it
// records; without, perf runs as it always did.
TEST(RecordPlanTest, AMaxSizeRaisesPerfsPriority) {
  RecordPlan plan;
  plan.command = {"./a.out"};
  EXPECT_EQ(plan.PerfNice(), 0);
  plan.max_size = uint64_t{8} << 20;
  EXPECT_EQ(plan.PerfNice(), RecordPlan::kMaxSizePerfNice);
  EXPECT_LT(plan.PerfNice(), 0);
  plan.pid = 4242;  // attached too
  plan.command.clear();
  EXPECT_EQ(plan.PerfNice(), RecordPlan::kMaxSizePerfNice);
}

// perf lost events: without --max-size a bigger buffer is the remedy; with
// it the cuts are, so the hint counts them and names a bound that cuts about
// once a second (eight chunks' worth of what perf wrote a second).
TEST(RecordPlanTest, TheLostEventsHintNamesTheCutsUnderAMaxSize) {
  RecordPlan plan;
  plan.command = {"./a.out"};
  EXPECT_EQ(plan.LostHint(0, 0, 6, ""), "a bigger buffer helps: perf record -m (128M here)");
  plan.max_size = uint64_t{8} << 20;
  // 60 chunks, 120 MiB in 6 s: 20 MiB a second, 160 MiB for one cut a second.
  const std::string hint = plan.LostHint(60, uint64_t{120} << 20, 6, "");
  EXPECT_EQ(hint,
            "with --max-size perf cut its output 60 times (every 0.10 s) and reads none of its 128M buffer while it "
            "cuts: a larger --max-size cuts less often (161.0 MiB or more: about once a second at this rate); a "
            "less busy machine helps too");
  EXPECT_THAT(plan.LostHint(60, uint64_t{120} << 20, 6, "Permission denied"),
              HasSubstr("; so would perf's priority, which could not be raised (Permission denied): run record as root"));
  // Nothing cut (perf ended before its first chunk closed): the buffer.
  EXPECT_THAT(plan.LostHint(0, 0, 6, ""), HasSubstr("perf record -m"));
}

// A process alone in its cgroup is recorded per CPU, limited to the cgroup:
// no per-thread descriptors for perf to spin on once a thread ends.
TEST(RecordPlanTest, AnAttachedProcessAloneInItsCgroupIsRecordedPerCpu) {
  RecordPlan plan;
  plan.pid = 4242;
  plan.cgroup = "system.slice/shop.service";
  const std::string cmd = absl::StrJoin(plan.PerfArgv(), " ");
  EXPECT_THAT(cmd, HasSubstr("-m 32M -z -k mono -o perf.data -d -a -G system.slice/shop.service"));
  EXPECT_THAT(cmd, ::testing::Not(HasSubstr("-p 4242")));
}

TEST(RecordPlanTest, RuntimeHints) {
  EXPECT_EQ(RecordPlan::RuntimeHints({"/usr/bin/node", "app.js"}).size(), 1u);
  EXPECT_TRUE(RecordPlan::RuntimeHints({"node", "--perf-basic-prof", "app.js"}).empty());
  EXPECT_EQ(RecordPlan::RuntimeHints({"java", "-jar", "x.jar"}).size(), 1u);
  EXPECT_TRUE(RecordPlan::RuntimeHints({"./a.out"}).empty());
}

TEST(CommandSpecTest, EveryHelpNamesEveryOptionItsParserAccepts) {
  ASSERT_GE(AllCommands().size(), 5u);
  for (const Command& c : AllCommands()) {
    SCOPED_TRACE(c.spec->name);
    EXPECT_EQ(c.spec->help.rfind("usage: pageblame " + c.spec->name, 0), 0u);
    for (const auto* flags : {&c.spec->value_flags, &c.spec->bool_flags}) {
      for (const std::string& flag : *flags) EXPECT_THAT(c.spec->help, HasSubstr(flag));
    }
    for (const auto& [alias, flag] : c.spec->aliases) EXPECT_THAT(c.spec->help, HasSubstr(alias + ","));
  }
}

}  // namespace
}  // namespace pageblame::cli

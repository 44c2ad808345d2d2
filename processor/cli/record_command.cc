// `pageblame record`: runs perf with the right events, stack mode and
// buffer (record_plan.h), then says what it got and what to run next.
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "processor/cli/child_process.h"
#include "processor/cli/command_spec.h"
#include "processor/cli/commands.h"
#include "processor/cli/record_plan.h"
#include "processor/cli/usage.h"
#include "processor/replay/trace_loader.h"
#include "processor/report/syscall_format.h"

namespace pageblame::cli {

const CommandSpec& RecordSpec() {
  static const CommandSpec kSpec = [] {
    CommandSpec s;
    s.name = "record";
    s.help =
        "usage: pageblame record [-o FILE] [--call-graph dwarf|fp] (-p PID | -- CMD [ARGS...])\n"
        "Records the memory syscalls (mmap, munmap, brk, mremap, mprotect,\n"
        "pkey_mprotect, madvise: those this kernel has) of a new or running process\n"
        "with their call stacks, by running perf (as root, or with\n"
        "kernel.perf_event_paranoid=-1). Stop an attached recording with Ctrl-C\n"
        "(or SIGINT/SIGTERM to this process: perf gets it and writes the trace).\n"
        "  -o, --output FILE     the trace (default perf.data); an existing FILE is kept\n"
        "                        as FILE.old (perf's rule)\n"
        "  -p, --pid PID         attach to a running process (perf record -d: the\n"
        "                        mappings it already has are reported too)\n"
        "  --call-graph dwarf|fp dwarf (default): copies 16 KiB of stack per call and\n"
        "                        unwinds it later, so stacks reach your code through a\n"
        "                        libc without frame pointers (Debian 12, RHEL 8/9,\n"
        "                        Ubuntu before 24.04); fp: frame pointers only, smaller\n"
        "  --dry-run             print the perf command instead of running it\n"
        "The command runs with DOTNET_PerfMapEnabled=1 (.NET then names its JIT\n"
        "frames). Run node with --perf-basic-prof --interpreted-frames-native-stack.\n";
    s.value_flags = {"--output", "--pid", "--call-graph"};
    s.bool_flags = {"--dry-run"};
    s.aliases = {{"-o", "--output"}, {"-p", "--pid"}};
    s.many_positional = true;
    return s;
  }();
  return kSpec;
}

namespace {

// perf needs the syscall tracepoints: root (or CAP_PERFMON), or a paranoid
// level of -1 for others.
absl::Status CheckPermission() {
  if (geteuid() == 0) return absl::OkStatus();
  std::ifstream f("/proc/sys/kernel/perf_event_paranoid");
  int level = 2;
  f >> level;
  if (level <= -1) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat(
      "perf_event_paranoid is ", level, ": recording syscall tracepoints needs root; run "
      "'sudo pageblame record ...', or allow it for everyone with "
      "'sudo sysctl kernel.perf_event_paranoid=-1'"));
}

// The memory syscalls whose tracepoints this kernel has (empty: unknown).
std::set<std::string> AvailableSyscalls() {
  for (const char* dir : {"/sys/kernel/tracing/events/syscalls", "/sys/kernel/debug/tracing/events/syscalls"}) {
    struct stat st;
    if (::stat(dir, &st) != 0) continue;
    std::set<std::string> out;
    for (const std::string& s : RecordPlan::MemorySyscalls()) {
      if (::stat(absl::StrCat(dir, "/sys_enter_", s).c_str(), &st) == 0) out.insert(s);
    }
    return out;
  }
  // Not mounted yet: perf mounts tracefs itself; try, to know what is there.
  if (geteuid() == 0 && ::mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr) == 0) {
    return AvailableSyscalls();
  }
  return {};
}

// perf's build options say whether it can write zstd-compressed traces.
bool PerfHasZstd() {
  FILE* p = popen("perf version --build-options 2>/dev/null", "r");
  if (p == nullptr) return false;
  char line[256];
  bool on = false;
  while (std::fgets(line, sizeof(line), p)) {
    std::string l(line);
    if (l.find("zstd") != std::string::npos && l.find("on") != std::string::npos) on = true;
  }
  pclose(p);
  return on;
}

// The attached process's command line, for runtime hints.
std::vector<std::string> CommandLineOf(uint32_t pid) {
  std::ifstream f(absl::StrCat("/proc/", pid, "/cmdline"));
  std::stringstream ss;
  ss << f.rdbuf();
  return absl::StrSplit(ss.str(), '\0', absl::SkipEmpty());
}

// The perf child, for ForwardToPerf (0: none yet).
volatile sig_atomic_t perf_child = 0;

// SIGINT or SIGTERM sent to `pageblame record` alone (a script's kill, a
// service manager's stop) is passed on to perf, which then ends the
// recording and writes its trace whole. A terminal's Ctrl-C reaches perf
// directly too; a second SIGINT changes nothing for perf.
void ForwardToPerf(int sig) {
  if (perf_child > 0) kill(static_cast<pid_t>(perf_child), sig);
}

// Runs perf and waits. Ctrl-C goes to perf (and the recorded program), which
// end the recording; pageblame forwards a stop signal sent to it alone, and
// summarizes after.
int RunPerf(const RecordPlan& plan) {
  const std::vector<std::string> argv = plan.PerfArgv();
  struct sigaction forward = {}, old_int = {}, old_term = {};
  forward.sa_handler = ForwardToPerf;
  sigemptyset(&forward.sa_mask);
  // Blocked until the child's pid is known, so none is lost in between.
  sigset_t stop_signals, old_mask;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigprocmask(SIG_BLOCK, &stop_signals, &old_mask);
  sigaction(SIGINT, &forward, &old_int);
  sigaction(SIGTERM, &forward, &old_term);
  const pid_t child = fork();
  if (child == 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    for (const std::string& kv : plan.ExtraEnvironment()) putenv(strdup(kv.c_str()));
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp("perf", args.data());
    std::fprintf(stderr, "pageblame record: cannot run perf: %s\n", std::strerror(errno));
    _exit(127);
  }
  perf_child = child > 0 ? child : 0;
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  int status = 0;
  while (child > 0 && waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  perf_child = 0;
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  if (child < 0) return -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGINT ? 0 : 128 + WTERMSIG(status);
}

// What the recording holds, and the commands to run next.
int Summarize(const RecordPlan& plan) {
  replay::LoadOptions o;
  o.path = plan.output;
  o.preload_symbols = false;
  auto trace = replay::LoadTrace(o);
  if (!trace.ok()) return ReportError(trace.status());
  const index::TraceIndex& idx = (*trace)->index();
  const index::TraceStats& s = idx.stats();
  std::fprintf(stderr, "pageblame record: %s: %llu memory calls of %zu %s over %s s\n",
               plan.output.c_str(), (unsigned long long)s.calls, idx.num_processes(),
               idx.num_processes() == 1 ? "process" : "processes",
               report::FormatTime(s.last_time - s.first_time).c_str());
  if (s.lost_records > 0) {
    std::fprintf(stderr,
                 "pageblame record: warning: perf lost %llu events; pages changed then may be "
                 "misattributed (pageblame says which spans); a bigger buffer helps: perf record -m\n",
                 (unsigned long long)s.lost_records);
  } else {
    std::fprintf(stderr, "pageblame record: no events lost\n");
  }
  // The pid to ask about: the attached one, or the command's (the first
  // process the trace saw), which the user has no other way to learn.
  std::optional<uint32_t> traced = plan.pid;
  if (!traced && idx.num_processes() > 0) traced = idx.process(0).pid;
  if (traced && !plan.pid) {
    std::fprintf(stderr, "pageblame record: the command ran as pid %u (%s)%s\n", *traced,
                 std::string(idx.strings().Get(idx.process(0).comm)).c_str(),
                 idx.num_processes() > 1
                     ? absl::StrCat("; ", idx.num_processes() - 1,
                                    idx.num_processes() == 2 ? " more process" : " more processes").c_str()
                     : "");
  }
  const std::string pid = traced ? absl::StrCat(" --pid ", *traced) : "";
  std::fprintf(stderr,
               "next: pageblame maps -i %s%s          (the address space, with origins)\n"
               "      pageblame query -i %s%s ADDR    (who made the page at ADDR)\n",
               plan.output.c_str(), pid.c_str(), plan.output.c_str(), pid.c_str());
  return 0;
}

// perf record keeps a trace it would overwrite: it renames FILE to FILE.old
// (replacing an older FILE.old) before it writes. Say so, so the user knows
// where the previous recording is.
void SayWhereTheOldTraceGoes(const std::string& output) {
  struct stat st;
  if (::stat(output.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return;
  std::fprintf(stderr, "pageblame record: %s exists: perf keeps it as %s.old%s\n", output.c_str(),
               output.c_str(), ::access((output + ".old").c_str(), F_OK) == 0 ? " (replacing that file)" : "");
}

absl::StatusOr<RecordPlan> PlanFrom(const Args& args) {
  RecordPlan plan;
  plan.output = args.Value("--output").value_or("perf.data");
  if (auto pid = args.Value("--pid")) {
    uint32_t v;
    if (!absl::SimpleAtoi(*pid, &v)) return UsageError(absl::StrCat("bad --pid '", *pid, "'"));
    plan.pid = v;
  }
  plan.command = args.positional();
  if (plan.pid.has_value() == !plan.command.empty()) {
    return UsageError("give either -p PID or a command to run (after --)");
  }
  const std::string graph = args.Value("--call-graph").value_or("dwarf");
  if (graph != "dwarf" && graph != "fp") {
    return UsageError(absl::StrCat("bad --call-graph '", graph, "': expected dwarf or fp"));
  }
  plan.call_graph = graph == "fp" ? RecordPlan::CallGraph::kFp : RecordPlan::CallGraph::kDwarf;
  return plan;
}

}  // namespace

int RunRecord(const std::vector<std::string>& argv) {
  int rc = 0;
  std::optional<Args> args = ParseCommand(RecordSpec(), argv, &rc);
  if (!args) return rc;
  absl::StatusOr<RecordPlan> plan = PlanFrom(*args);
  if (!plan.ok()) return CommandUsage(RecordSpec(), std::string(plan.status().message()));
  if (ChildProcess::FindInPath("perf").empty()) {
    return ReportError(absl::NotFoundError(
        "perf is not installed: on Debian/Ubuntu 'apt-get install linux-perf' (Ubuntu: "
        "linux-tools-$(uname -r)), on Fedora/RHEL 'dnf install perf'"));
  }
  plan->available = AvailableSyscalls();
  plan->compress = PerfHasZstd();
  if (args->Has("--dry-run")) {
    std::printf("%s\n", absl::StrJoin(plan->PerfArgv(), " ").c_str());
    return 0;
  }
  if (absl::Status s = CheckPermission(); !s.ok()) return ReportError(s);
  const std::vector<std::string> cmdline = plan->pid ? CommandLineOf(*plan->pid) : plan->command;
  for (const std::string& hint : RecordPlan::RuntimeHints(cmdline)) {
    std::fprintf(stderr, "pageblame record: hint: %s\n", hint.c_str());
  }
  SayWhereTheOldTraceGoes(plan->output);
  const int perf_rc = RunPerf(*plan);
  struct stat st;
  if (::stat(plan->output.c_str(), &st) != 0) {
    return ReportError(absl::UnavailableError(
        absl::StrCat("perf record failed (exit ", perf_rc, ") and wrote no ", plan->output)));
  }
  return Summarize(*plan);
}

}  // namespace pageblame::cli

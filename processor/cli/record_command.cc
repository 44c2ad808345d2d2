// `pageblame record`: runs perf with the right events, stack mode and
// buffer (record_plan.h), then says what it got and what to run next.
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "processor/base/format.h"
#include "processor/base/status_macros.h"
#include "processor/base/text_escape.h"
#include "processor/cli/child_process.h"
#include "processor/cli/command_spec.h"
#include "processor/cli/commands.h"
#include "processor/cli/record_plan.h"
#include "processor/cli/runtime_table_saver.h"
#include "processor/cli/usage.h"
#include "processor/heap/heap_snapshot_file.h"
#include "processor/recorder/chunk_folder.h"
#include "processor/recorder/chunk_store.h"
#include "processor/recorder/dotnet_ipc_client.h"
#include "processor/recorder/perf_poll_fix.h"
#include "processor/recorder/perf_run.h"
#include "processor/recorder/recorded_processes.h"
#include "processor/recorder/recording_files.h"
#include "processor/recorder/runtime_file_copy.h"
#include "processor/regions/runtime_table_store.h"
#include "processor/recorder/target_cgroup.h"
#include "processor/replay/recording_file.h"
#include "processor/session/checkpoint_note.h"
#include "processor/session/session.h"
#include "processor/residency/snapshot_file.h"
#include "processor/session/selection.h"

namespace pageblame::cli {

const CommandSpec& RecordSpec() {
  static const CommandSpec kSpec = [] {
    CommandSpec s;
    s.name = "record";
    s.help =
        "usage: pageblame record [-o FILE] [--call-graph dwarf|fp] [--rss-every SECONDS] [--force]\n"
        "                        (-p PID [--per-thread] | -- CMD [ARGS...])\n"
        "Records the memory syscalls (mmap, munmap, brk, mremap, mprotect,\n"
        "pkey_mprotect, madvise: those this kernel has) of a new or running process\n"
        "with their call stacks, by running perf (as root, or with\n"
        "kernel.perf_event_paranoid=-1), and which of their pages are in RAM\n"
        "(residency snapshots, into FILE.rss, from the moment perf records; with each,\n"
        "a walk of its glibc heap into FILE.heap, for 'heap -i FILE'; for a .NET\n"
        "process also the runtime's own table at the stop and at each requested\n"
        "snapshot, into FILE.runtime/, for 'attribute --unaccounted'). Attached, it\n"
        "also keeps the kernel's table of the mappings at the attach (FILE.attach-maps:\n"
        "'maps' is then page-exact from the attach on) and the runtime's perf map and\n"
        "jitdump as at the stop (FILE.runtime/). Stop an attached recording with Ctrl-C\n"
        "(or SIGINT/SIGTERM to this process: a last snapshot, then perf gets it and\n"
        "writes the trace). Ask for a snapshot at any moment with\n"
        "  kill -USR1 $(pgrep -f 'pageblame record')\n"
        "  -o, --output FILE     the trace (default " + std::string(session::kDefaultTracePath) +
        "); an existing FILE is kept\n"
        "                        as FILE.old (perf's rule), its FILE.rss as FILE.old.rss\n"
        "                        and FILE.runtime as FILE.old.runtime. Every file is made\n"
        "                        new, never through a link; a directory others may write\n"
        "                        is refused\n"
        "  --force               record into a directory others may write all the same\n"
        "  -p, --pid PID         attach to a running process (perf record -d: the\n"
        "                        mappings it already has are reported too); per CPU,\n"
        "                        limited to its cgroup when that holds at most 8\n"
        "                        processes (a service, a container: all recorded),\n"
        "                        else per thread (with pageblame's fix for perf's\n"
        "                        spin once a recorded thread ends)\n"
        "  --per-thread          with -p: per thread (perf -p) even then\n"
        "  --call-graph dwarf|fp dwarf (default): copies 16 KiB of stack per call and\n"
        "                        unwinds it later, so stacks reach your code through a\n"
        "                        libc without frame pointers (Debian 12, RHEL 8/9,\n"
        "                        Ubuntu before 24.04); fp: frame pointers only, smaller\n"
        "  --rss-every SECONDS   a residency snapshot of every recorded process once\n"
        "                        perf records and this often (default 1; 0: no\n"
        "                        snapshots at all), one at the stop, one at the\n"
        "                        command's exit, one per SIGUSR1\n"
        "  --max-size SIZE       keep the recording's disk within SIZE (e.g. 64M, 2G):\n"
        "                        perf writes chunks of SIZE/8, each folded into\n"
        "                        FILE.index as soon as perf closes it and removed;\n"
        "                        the commands then read FILE.index; FILE.rss and FILE.heap\n"
        "                        are thinned by age to SIZE/16 each (docs/recording-a-service.md)\n"
        "  --checkpoint-every SECONDS\n"
        "                        with --max-size: write FILE.index this often while\n"
        "                        recording (default 60; the first once a chunk is\n"
        "                        folded; 0: at the stop only), so that a recorder\n"
        "                        killed (kill -9, the OOM killer) leaves the recording\n"
        "                        up to its last checkpoint\n"
        "  --max-memory SIZE     with --max-size: keep the index folded in memory\n"
        "                        (calls, versions, stacks, strings, live regions)\n"
        "                        within SIZE (default: --max-size's SIZE), thinning\n"
        "                        the oldest history as it goes\n"
        "  --dry-run             print the perf command instead of running it\n"
        "The command runs with DOTNET_PerfMapEnabled=1 and\n"
        "DOTNET_PerfMapStubGranularity=2, unless set (.NET then writes the perf map\n"
        "and jitdump that name its JIT and ReadyToRun frames); an attached .NET 8+\n"
        "process gets them turned on through its diagnostics socket while it is\n"
        "recorded. Run node with --perf-basic-prof --interpreted-frames-native-stack.\n";
    s.value_flags = {"--output", "--pid",           "--call-graph",      "--rss-every",
                     "--max-size", "--max-memory", "--checkpoint-every"};
    s.bool_flags = {"--dry-run", "--per-thread", "--force"};
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

// What this perf can do, from one `perf version --build-options`: its first
// line is the version (pings: RecordPlan::AnswersPing), the others its build
// options (zstd: compressed traces).
struct PerfAbilities {
  bool zstd = false;
  bool ping = false;
  bool no_bpf_event = false;
};
PerfAbilities ReadPerfAbilities() {
  PerfAbilities can;
  FILE* p = popen("perf version --build-options 2>/dev/null", "r");
  if (p == nullptr) return can;
  char line[256];
  for (bool first = true; std::fgets(line, sizeof(line), p); first = false) {
    const std::string l(line);
    if (first) can.ping = RecordPlan::AnswersPing(l);
    if (first) can.no_bpf_event = RecordPlan::KnowsNoBpfEvent(l);
    if (l.find("zstd") != std::string::npos && l.find("on") != std::string::npos) can.zstd = true;
  }
  pclose(p);
  return can;
}

// The command can be run (found in PATH as perf's execvp finds it, and
// executable), or the pid names a live process. Else NotFound.
absl::Status CheckTarget(const RecordPlan& plan) {
  if (plan.pid) {
    if (::kill(static_cast<pid_t>(*plan.pid), 0) != 0 && errno == ESRCH) {
      return absl::NotFoundError(absl::StrCat("no process has pid ", *plan.pid));
    }
    const std::optional<recorder::ProcessRow> row =
        recorder::ParseStat(recorder::ReadSmallFile(absl::StrCat("/proc/", *plan.pid, "/stat")));
    if (row && row->state == 'Z') {
      return absl::NotFoundError(
          absl::StrCat("pid ", *plan.pid, " has exited (a zombie its parent has not reaped): nothing to record"));
    }
    // perf reads it for the mappings the process has (-d) and fails
    // without a word when it cannot (perf 6.1: exit 255, its reason only
    // with -v).
    const std::string maps = absl::StrCat("/proc/", *plan.pid, "/maps");
    if (std::FILE* f = std::fopen(maps.c_str(), "r")) {
      std::fclose(f);
    } else {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot read ", maps, " (", std::strerror(errno), "): perf cannot record pid ", *plan.pid,
                       " from here"));
    }
    return absl::OkStatus();
  }
  if (!plan.command.empty() && ChildProcess::FindInPath(plan.command[0]).empty()) {
    return absl::NotFoundError(absl::StrCat("cannot run ", plan.command[0], ": ",
                                            plan.command[0].find('/') == std::string::npos
                                                ? "not found in PATH"
                                                : "no such executable file"));
  }
  return absl::OkStatus();
}

// The attached process's command line, for runtime hints.
std::vector<std::string> CommandLineOf(uint32_t pid) {
  std::ifstream f(absl::StrCat("/proc/", pid, "/cmdline"));
  std::stringstream ss;
  ss << f.rdbuf();
  return absl::StrSplit(ss.str(), '\0', absl::SkipEmpty());
}

// The attached process's environment (as it was at exec), NAME=value each.
std::vector<std::string> EnvironmentOf(uint32_t pid) {
  std::ifstream f(absl::StrCat("/proc/", pid, "/environ"), std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return absl::StrSplit(ss.str(), '\0', absl::SkipEmpty());
}

// The value of NAME in `env`, "" when it is not set.
std::string ValueOf(const std::vector<std::string>& env, absl::string_view name) {
  for (const std::string& var : env) {
    absl::string_view v = var;
    if (absl::ConsumePrefix(&v, name) && absl::ConsumePrefix(&v, "=")) return std::string(v);
  }
  return "";
}

// A runtime that embeds coreclr in its executable (single-file apps) maps
// no libcoreclr.so; its diagnostics socket tells it apart instead.
bool MapsLibCoreclr(uint32_t pid) { return RuntimeTableSaver::IsDotnet(pid); }

constexpr char kDotnetFix[] =
    "its JIT frames will show as [unknown] /memfd:doublemapper; start it with "
    "DOTNET_PerfMapEnabled=1 to name them";

// A .NET 8+ process attached to names its JIT code only if its runtime
// writes the perf map: turned on here through the runtime's diagnostics
// socket (the runtime then lists the methods it has already compiled too),
// unless the process was started with it on. Returns the client to turn it
// off with after the recording; nothing when it was not turned on here (not
// .NET, on already, or impossible: then a warning with the fix).
std::optional<recorder::DotnetIpcClient> TurnOnDotnetPerfMap(uint32_t pid) {
  const std::vector<std::string> env = EnvironmentOf(pid);
  for (const char* name : {"DOTNET_PerfMapEnabled", "COMPlus_PerfMapEnabled"}) {
    const std::string v = ValueOf(env, name);
    if (!v.empty() && v != "0") return std::nullopt;
  }
  absl::StatusOr<std::string> socket = recorder::DotnetIpcClient::SocketOf(pid);
  if (!socket.ok()) {
    if (MapsLibCoreclr(pid)) {
      std::fprintf(stderr,
                   "pageblame record: warning: pid %u runs .NET without a diagnostics socket "
                   "(DOTNET_EnableDiagnostics=0?): %s\n",
                   pid, kDotnetFix);
    }
    return std::nullopt;
  }
  recorder::DotnetIpcClient client(*socket);
  // A socket by that name may be anyone's: only the target itself is asked.
  client.RequirePeer(pid);
  timespec asked = {};
  ::clock_gettime(CLOCK_REALTIME, &asked);
  if (absl::Status s = client.EnablePerfMap(recorder::DotnetIpcClient::PerfMapType::kAll); !s.ok()) {
    std::fprintf(stderr, "pageblame record: warning: could not turn on pid %u's perf map (%s): %s\n", pid,
                 std::string(s.message()).c_str(), kDotnetFix);
    return std::nullopt;
  }
  // Its "OK" is believed when the perf map is there.
  absl::StatusOr<std::string> map = recorder::DotnetIpcClient::PerfMapWritten(
      pid, static_cast<uint64_t>(asked.tv_sec) * 1000000000 + asked.tv_nsec, /*timeout_ms=*/3000);
  if (!map.ok()) {
    std::fprintf(stderr,
                 "pageblame record: warning: pid %u's runtime answered that its perf map is on, but %s: %s\n", pid,
                 std::string(map.status().message()).c_str(), kDotnetFix);
    return client;
  }
  std::fprintf(stderr,
               "pageblame record: pid %u's .NET runtime writes its perf map and jitdump (/tmp/perf-%u.map, "
               "/tmp/jit-%u.dump) while recording: turned on through its diagnostics socket\n",
               pid, pid, pid);
  return client;
}

// After the recording: the perf map goes off again, as it was; the files
// stay for `maps` and `attribute` to read.
void TurnOffDotnetPerfMap(uint32_t pid, const std::optional<recorder::DotnetIpcClient>& client) {
  if (!client) return;
  if (absl::Status s = client->DisablePerfMap(); !s.ok()) {
    std::fprintf(stderr, "pageblame record: warning: could not turn pid %u's perf map off again (%s)\n", pid,
                 std::string(s.message()).c_str());
  }
}

// What thinning by age (--max-size) did to a snapshot file, after its name:
// "" when it dropped nothing.
std::string ThinnedText(const recorder::SnapshotWriter::ThinSummary& t) {
  if (!t.error.empty()) return absl::StrCat(" (not thinned after an error: ", t.error, ")");
  if (t.dropped == 0) return "";
  return absl::StrCat(" (thinned by age: ", t.records - t.dropped, " kept, ", HumanBytes(t.file_bytes),
                      "; ", t.dropped, " older ones dropped)");
}

// When a process's last snapshot was taken, for the summary.
std::string WhenTaken(const recorder::LastSnapshot& p) {
  switch (p.reason) {
    case residency::SnapshotReason::kExit: return " at its exit";
    case residency::SnapshotReason::kStop: return " at the stop";
    case residency::SnapshotReason::kRequested:
    case residency::SnapshotReason::kPeriodic: break;
  }
  return absl::StrCat(" at its last snapshot (", FormatTime(p.time), ")");
}

// Each process's resident bytes at the stop (its last snapshot, most
// resident first), how many snapshots were taken and where they are.
void SummarizeResidency(const recorder::PerfRunResult& run) {
  if (!run.snapshots) return;
  const recorder::TakerSummary& s = run.summary;
  if (!s.error.empty()) {
    std::fprintf(stderr, "pageblame record: warning: residency snapshots: %s\n", s.error.c_str());
  }
  if (!run.note.empty()) std::fprintf(stderr, "pageblame record: note: %s\n", run.note.c_str());
  if (s.snapshots == 0) {
    std::fprintf(stderr, "pageblame record: no residency snapshot was taken\n");
    return;
  }
  std::vector<recorder::LastSnapshot> procs = s.processes;
  std::stable_sort(procs.begin(), procs.end(), [](const auto& a, const auto& b) { return a.resident > b.resident; });
  constexpr size_t kShown = 5;
  std::vector<std::string> parts;
  for (size_t i = 0; i < procs.size() && i < kShown; ++i) {
    parts.push_back(absl::StrCat("pid ", procs[i].pid, " (", procs[i].comm, ") ", HumanBytes(procs[i].resident),
                                 WhenTaken(procs[i])));
  }
  if (procs.size() > kShown) parts.push_back(absl::StrCat(procs.size() - kShown, " more"));
  std::fprintf(stderr, "pageblame record: resident: %s\n", absl::StrJoin(parts, "; ").c_str());
  std::fprintf(stderr, "pageblame record: %zu residency %s in %s%s\n", s.snapshots,
               s.snapshots == 1 ? "snapshot" : "snapshots", s.path.c_str(), ThinnedText(s.thinned).c_str());
  if (s.mismatch) {
    std::fprintf(stderr,
                 "pageblame record: note: pid %u's snapshot at %s counted %s resident where smaps_rollup "
                 "says %s: PROT_NONE mappings, which snapshots do not read, hold resident pages, or the "
                 "process changed while it was read\n",
                 s.mismatch->pid, FormatTime(s.mismatch->time).c_str(),
                 HumanBytes(s.mismatch->resident).c_str(), HumanBytes(s.mismatch->rollup_rss).c_str());
  }
}

// How many heap snapshots were written, their bytes and what the walks
// cost (recorder/heap_recorder.h), and what was not walked.
void SummarizeHeap(const recorder::PerfRunResult& run) {
  if (!run.snapshots) return;
  const recorder::HeapRecordSummary& h = run.summary.heap;
  if (!h.error.empty()) std::fprintf(stderr, "pageblame record: warning: heap snapshots: %s\n", h.error.c_str());
  for (const std::string& n : h.notes) std::fprintf(stderr, "pageblame record: note: %s\n", n.c_str());
  if (h.snapshots > 0) {
    std::fprintf(stderr,
                 "pageblame record: %zu heap %s (%s) in %s%s; a walk took %.1f ms on average, %.1f ms at most\n",
                 h.snapshots, h.snapshots == 1 ? "snapshot" : "snapshots", HumanBytes(h.bytes).c_str(), h.path.c_str(),
                 ThinnedText(h.thinned).c_str(), 1e3 * h.walk_seconds_total / static_cast<double>(h.snapshots),
                 1e3 * h.walk_seconds_max);
  }
  if (h.skipped > 0) {
    std::fprintf(stderr,
                 "pageblame record: note: %zu periodic heap %s skipped: walking took longer than a quarter of the "
                 "time between snapshots\n",
                 h.skipped, h.skipped == 1 ? "walk was" : "walks were");
  }
}

// What recording cost the machine: attached, perf's and pageblame's own
// (snapshots, pings, the folding of --max-size), without the .NET table
// helper's runs, which are said when they happen; under `-- CMD` perf's CPU
// time includes the command's, so pageblame's alone.
void SummarizeRecorderCost(const RecordPlan& plan, const recorder::PerfRunResult& run, double helper_cpu_seconds) {
  if (run.wall_seconds <= 0) return;
  if (!plan.pid) {
    std::fprintf(stderr, "pageblame record: pageblame used %.2f s of CPU in %.1f s (%.1f%% of a core)\n",
                 run.self_cpu_seconds, run.wall_seconds, 100 * run.self_cpu_seconds / run.wall_seconds);
    return;
  }
  const double perf = std::max(0.0, run.perf_cpu_seconds - helper_cpu_seconds);
  std::fprintf(stderr,
               "pageblame record: the recorder used %.2f s of CPU in %.1f s (%.1f%% of a core: perf %.2f s, "
               "pageblame %.2f s)\n",
               perf + run.self_cpu_seconds, run.wall_seconds, 100 * (perf + run.self_cpu_seconds) / run.wall_seconds,
               perf, run.self_cpu_seconds);
}

// perf failed: its status, and its own last words when they were kept
// (attached) — perf 6.1 can fail at start without any.
int PerfFailed(int perf_rc, const recorder::PerfRunResult& run, const std::string& load_error) {
  // Its message on one line; perf's "Error:" heading says nothing.
  std::vector<std::string> lines;
  for (absl::string_view l : absl::StrSplit(run.perf_stderr, '\n')) {
    l = absl::StripAsciiWhitespace(l);
    if (!l.empty() && l != "Error:") lines.emplace_back(l);
  }
  const std::string said = absl::StrJoin(lines, " ");
  return ReportError(absl::UnavailableError(absl::StrCat(
      "perf record failed (exit ", perf_rc, ") and recorded nothing",
      !said.empty() ? absl::StrCat(": perf said \"", said, "\"")
                    : !load_error.empty() ? absl::StrCat(" (", load_error, ")") : "")));
}

// RecordPlan::LostHint for this recording (`folded`: --max-size's chunks, or null).
std::string LostHintFor(const RecordPlan& plan, const recorder::PerfRunResult& run,
                        const recorder::ChunkFolder::Stats* folded) {
  return plan.LostHint(folded != nullptr ? folded->chunks : 0, folded != nullptr ? folded->chunk_bytes : 0,
                       run.wall_seconds, run.perf_nice_error);
}

// What the recording holds, and the commands to run next.
int Summarize(const RecordPlan& plan, const recorder::PerfRunResult& run, const RuntimeTableSaver& tables,
              const recorder::ChunkFolder::Stats* folded) {
  const int runtime_tables = tables.saved();
  session::SessionOptions o;
  o.path = plan.output;
  o.preload_symbols = false;
  o.residency.off = true;  // its own summary says what the snapshots hold
  auto trace = session::Session::Open(o);
  // perf failed at start, or was killed: its failure, not what it left.
  if (!trace.ok() && run.perf_exit != 0) return PerfFailed(run.perf_exit, run, std::string(trace.status().message()));
  // (perf exits with the command's status when it ran one: not a failure
  // of its own once the trace reads.)
  if (!trace.ok()) return ReportError(trace.status());
  const index::TraceIndex& idx = (*trace)->index();
  const index::TraceStats& s = idx.stats();
  // Per CPU (perf -a), perf lists every process of the machine: the ones
  // recorded are those of the cgroup, with calls.
  const size_t processes = session::DefaultProcesses(**trace).size();
  std::fprintf(stderr, "pageblame record: %s: %llu memory calls of %zu %s over %s s\n",
               plan.output.c_str(), (unsigned long long)s.calls, processes,
               processes == 1 ? "process" : "processes",
               FormatTime(s.last_time - s.first_time).c_str());
  if (s.lost_records > 0) {
    std::fprintf(stderr,
                 "pageblame record: warning: perf lost %llu events; pages changed then may be "
                 "misattributed (pageblame says which spans); %s\n",
                 (unsigned long long)s.lost_records, LostHintFor(plan, run, folded).c_str());
  } else {
    std::fprintf(stderr, "pageblame record: no events lost\n");
  }
  // The pid to ask about: the attached one, or the command's (the first
  // process the trace saw), which the user has no other way to learn.
  std::optional<uint32_t> traced = plan.pid;
  if (!traced && idx.num_processes() > 0) traced = idx.process(0).pid;
  if (traced && !plan.pid) {
    std::fprintf(stderr, "pageblame record: the command ran as pid %u (%s)%s\n", *traced,
                 EscapeName(idx.strings().Get(idx.process(0).comm)).c_str(),
                 idx.num_processes() > 1
                     ? absl::StrCat("; ", idx.num_processes() - 1,
                                    idx.num_processes() == 2 ? " more process" : " more processes").c_str()
                     : "");
  }
  const std::string pid = traced ? absl::StrCat(" --pid ", *traced) : "";
  SummarizeRecorderCost(plan, run, tables.helper_cpu_seconds());
  SummarizeResidency(run);
  SummarizeHeap(run);
  std::fprintf(stderr,
               "next: pageblame maps -i %s%s          (the address space, with origins)\n"
               "      pageblame query -i %s%s ADDR    (who made the page at ADDR)\n",
               plan.output.c_str(), pid.c_str(), plan.output.c_str(), pid.c_str());
  if (runtime_tables > 0) {
    std::fprintf(stderr,
                 "      pageblame attribute -i %s --unaccounted [--at T]   (the .NET memory its runtime does not "
                 "own, by stack)\n",
                 plan.output.c_str());
  }
  return 0;
}

// Where the recording that was at the trace's name went, so the user knows
// (recorder/recording_files.h: perf's rule, applied before perf starts).
void SayWhatWasSetAside(const recorder::RecordingFiles& files) {
  const recorder::RecordingFiles::SetAside& a = files.set_aside();
  if (!a.moved) return;
  const std::string& t = files.trace();
  std::vector<std::string> sides;
  if (a.rss) sides.push_back(absl::StrCat(residency::SnapshotPathFor(t), " as ", residency::SnapshotPathFor(t + ".old")));
  if (a.heap) sides.push_back(absl::StrCat(heap::HeapSnapshotPathFor(t), " as ", heap::HeapSnapshotPathFor(t + ".old")));
  if (a.runtime) {
    sides.push_back(absl::StrCat(regions::RuntimeTableStore::DirFor(t), "/ as ",
                                 regions::RuntimeTableStore::DirFor(t + ".old"), "/"));
  }
  std::fprintf(stderr, "pageblame record: %s %s: kept as %s.old%s%s\n", t.c_str(),
               a.was_link ? "was a symbolic link (moved, not followed)" : "exists", t.c_str(),
               a.replaced_old ? " (replacing that file)" : "",
               sides.empty() ? "" : absl::StrCat(", with ", absl::StrJoin(sides, " and ")).c_str());
}

// Per CPU limited to the process's cgroup when that is small (one ring
// buffer per CPU, not per thread, and the cgroup's other processes recorded
// too: recorder/target_cgroup.h). Said either way: what is recorded differs.
void ChooseCgroup(RecordPlan* plan) {
  std::string why_not;
  if (std::optional<recorder::TargetCgroup::Choice> c = recorder::TargetCgroup::SmallCgroupOf(*plan->pid, &why_not)) {
    plan->cgroup = c->cgroup;
    const std::string who =
        c->members == 1 ? absl::StrCat("pid ", *plan->pid, " is alone in cgroup ", c->cgroup)
                        : absl::StrCat("pid ", *plan->pid, " shares cgroup ", c->cgroup, " with ", c->members - 1,
                                       c->members == 2 ? " other process (recorded too)" : " other processes (recorded too)");
    std::fprintf(stderr,
                 "pageblame record: %s: recording per CPU, limited to that cgroup (perf -a -G)\n",
                 who.c_str());
    return;
  }
  std::fprintf(stderr, "pageblame record: recording pid %u per thread (perf -p): %s\n", *plan->pid,
               why_not.c_str());
}

// perf attached per thread spins once a thread it records has ended, unless
// it runs with pageblame's fix (recorder/perf_poll_fix.h); "" without it
// (said).
std::string PerfPollFixFor(const RecordPlan& plan) {
  absl::StatusOr<std::string> fix = recorder::PerfPollFix::Locate();
  if (!fix.ok()) {
    std::fprintf(stderr,
                 "pageblame record: warning: %s: perf attached per thread will spin on a core once a thread of "
                 "pid %u ends (docs/performance.md, \"Attaching\")\n",
                 std::string(fix.status().message()).c_str(), *plan.pid);
    return "";
  }
  return *fix;
}

// What became of perf's priority (--max-size), the fix for perf's spin and
// the kernel's table of the mappings at the attach.
void SayAttachMaps(const recorder::PerfRunOptions& o, const recorder::PerfRunResult& run) {
  if (!run.perf_recorded) return;
  if (!run.perf_nice_error.empty()) {
    std::fprintf(stderr,
                 "pageblame record: warning: perf's priority could not be raised to nice %d (%s): at a high rate "
                 "it may lose events at --max-size's cuts\n",
                 o.perf_nice, run.perf_nice_error.c_str());
  }
  if (!o.preload.empty() && !run.preload_loaded) {
    std::fprintf(stderr,
                 "pageblame record: warning: perf did not load %s (is it setuid, or linked statically?): it spins on "
                 "a core once a recorded thread ends\n",
                 o.preload.c_str());
  }
  if (!run.attach_maps_error.empty()) {
    std::fprintf(stderr,
                 "pageblame record: warning: no table of the mappings at the attach (%s): reservations older than "
                 "the attach are not in the answers\n",
                 run.attach_maps_error.c_str());
  }
}

// The perf maps and jitdumps of the recorded processes, as they are now,
// into TRACE.runtime/ (recorder/runtime_file_copy.h): the trace then names
// its JIT frames by itself, and the cut tail of a file the runtime is still
// writing is left out.
void KeepRuntimeFiles(recorder::RecordingFiles* files, const RecordPlan& plan, const recorder::PerfRunResult& run) {
  if (!run.perf_recorded) return;
  std::vector<uint32_t> pids;
  if (plan.pid) pids.push_back(*plan.pid);
  for (const recorder::LastSnapshot& p : run.summary.processes) {
    if (std::find(pids.begin(), pids.end(), p.pid) == pids.end()) pids.push_back(p.pid);
  }
  const recorder::RuntimeFileCopy::Result r = recorder::RuntimeFileCopy::Copy(files, pids, "/tmp");
  for (const std::string& e : r.errors) {
    std::fprintf(stderr, "pageblame record: warning: not kept with the trace: %s\n", EscapeName(e).c_str());
  }
  if (r.copied.empty()) return;
  std::vector<std::string> names;
  for (const std::string& c : r.copied) names.push_back(c.substr(c.rfind('/') + 1));
  std::fprintf(stderr, "pageblame record: the runtime's %s as at the stop kept in %s/\n",
               EscapeName(absl::StrJoin(names, ", ")).c_str(),
               EscapeName(regions::RuntimeTableStore::DirFor(files->trace())).c_str());
}

// --max-size: the folding of perf's chunks, started before perf (it waits
// for the first chunk). Only in a directory no one else can change: perf
// makes each new chunk there by name.
absl::StatusOr<std::unique_ptr<recorder::ChunkFolder>> StartFolding(const RecordPlan& plan,
                                                                    const recorder::RecordingFiles& files) {
  if (files.perf_fd() >= 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--max-size: someone other than you or root can change ", EscapeName(plan.output),
        "'s directory (or one above it), where perf makes each new chunk by name: record into one only you can "
        "write"));
  }
  recorder::ChunkStore store(files.dir_fd(), files.base(), files.trace());
  if (const std::vector<std::string> old = store.Closed(); !old.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("--max-size: ", EscapeName(store.PathOf(old.front())),
                                                      " (a chunk of an earlier recording) is there: move it away"));
  }
  auto folder = std::make_unique<recorder::ChunkFolder>(std::move(store), plan.output, plan.max_size / 2,
                                                        plan.checkpoint_every, plan.MemoryBound());
  folder->Start();
  return folder;
}

// A recording killed while it folded left its checkpoint (and perhaps
// chunks) under this name: recording over it would mix the two (its chunks
// would be taken for this one's). Refused, saying what to do.
absl::Status RefuseKilledRecording(const RecordPlan& plan) {
  const std::string index = replay::RecordingFile::PathFor(plan.output, false);
  if (plan.output == "-" || !session::IsCheckpointIndex(index)) return absl::OkStatus();
  const std::vector<std::string> left = session::LeftAfterCheckpoint(plan.output);
  return absl::FailedPreconditionError(absl::StrCat(
      EscapeName(index), " is the checkpoint of a recording that was not stopped (its recorder was killed, or still records)",
      left.empty() ? "" : absl::StrCat(", with ", left.size(), " chunk files after it"),
      ": read it first ('pageblame maps ", EscapeName(plan.output), "' says what it holds), then move ",
      EscapeName(plan.output), ".index", left.empty() ? "" : absl::StrCat(" and ", EscapeName(plan.output), ".*"),
      " away, or record into another file"));
}

// After perf: the folded recording written as TRACE.index, and what the
// disk held; an error leaves the chunks not folded where they are.
void FinishFolding(recorder::ChunkFolder* folder) {
  folder->PerfEnded();
  const absl::Status s = folder->Finish();
  // No chunk at all: perf failed at start, which the summary says.
  if (!s.ok() && folder->stats().chunk_bytes > 0) std::fprintf(stderr, "pageblame record: warning: the chunks were not all folded: %s\n",
                            std::string(s.message()).c_str());
}

// What the folding held in memory: the index against --max-memory, with
// the blocks made ahead beside it, and where it thinned it.
void SummarizeFoldingMemory(const RecordPlan& plan, const recorder::ChunkFolder::Stats& st) {
  std::fprintf(stderr,
               "pageblame record: the folded index took %s of memory at most (--max-memory %s: its calls, versions, "
               "stacks, strings and live regions), %s with the blocks made ahead for the replay%s\n",
               HumanBytes(st.peak_memory).c_str(), HumanBytes(plan.MemoryBound()).c_str(),
               HumanBytes(st.peak_index_memory).c_str(),
               st.memory_thinnings == 0
                   ? ""
                   : absl::StrCat("; thinned in memory ", st.memory_thinnings,
                                  " times (the calls, versions and stacks of regions gone), the last before ",
                                  FormatTime(st.memory_cut))
                         .c_str());
}

// What --max-size kept: the disk at its most, what perf wrote, the folding's cost.
void SummarizeFolding(const RecordPlan& plan, const recorder::ChunkFolder& folder,
                      const recorder::RecordingFiles& files) {
  const recorder::ChunkFolder::Stats& st = folder.stats();
  const uint64_t now = recorder::ChunkStore(files.dir_fd(), files.base(), files.trace()).DiskBytes();
  std::fprintf(stderr,
               "pageblame record: --max-size %s: perf wrote %s in %llu chunks, each folded into %s and removed "
               "(%.1f ms a chunk on average, %.1f ms at most); the recording took %s of disk at most, %s now "
               "(the index %s: %s)%s\n",
               HumanBytes(plan.max_size).c_str(), HumanBytes(st.chunk_bytes).c_str(), (unsigned long long)st.chunks,
               folder.IndexPath().c_str(),
               st.chunks ? 1e3 * st.fold_seconds / static_cast<double>(st.chunks) : 0.0, 1e3 * st.max_fold_seconds,
               HumanBytes(st.peak_disk).c_str(), HumanBytes(now).c_str(), HumanBytes(st.index_bytes).c_str(),
               st.thinned_before == 0
                   ? "every call kept"
                   : absl::StrCat(st.memory_cut != 0 && st.thinned_before <= st.memory_cut
                                      ? "thinned in memory to fit --max-memory"
                                      : "thinned to fit half of it",
                                  ": the history before ", FormatTime(st.thinned_before),
                                  " is not kept, the regions alive then and after are, whole")
                         .c_str(),
               st.peak_disk > plan.max_size ? "; warning: more than --max-size" : "");
  if (st.checkpoints > 0 || !st.checkpoint_error.empty()) {
    std::fprintf(stderr,
                 "pageblame record: %llu checkpoint%s of %s while recording (%.1f ms each on average, %.1f ms at "
                 "most, the folding paused meanwhile; %s at most)%s%s\n",
                 (unsigned long long)st.checkpoints, st.checkpoints == 1 ? "" : "s", folder.IndexPath().c_str(),
                 st.checkpoints ? 1e3 * st.checkpoint_seconds / static_cast<double>(st.checkpoints) : 0.0,
                 1e3 * st.max_checkpoint_seconds, HumanBytes(st.checkpoint_bytes).c_str(),
                 st.checkpoint_error.empty() ? "" : "; warning: not all written: ",
                 EscapeName(st.checkpoint_error).c_str());
  }
  SummarizeFoldingMemory(plan, st);
}

// A size flag (`name`), if given, into `bytes`: at least 1M.
absl::Status SizeFlag(const Args& args, const char* name, uint64_t* bytes) {
  const std::optional<std::string> size = args.Value(name);
  if (size && (!RecordPlan::ParseSize(*size, bytes) || *bytes < (uint64_t{1} << 20))) {
    return UsageError(absl::StrCat("bad ", name, " '", *size, "': expected bytes with K, M or G, at least 1M"));
  }
  return absl::OkStatus();
}

// --max-size and the flags that go with it.
absl::Status FoldingFlags(const Args& args, RecordPlan* plan) {
  RETURN_IF_ERROR(SizeFlag(args, "--max-size", &plan->max_size));
  if (plan->max_size > 0 && plan->output == "-") {
    return UsageError("--max-size needs a file (-o FILE), not standard output");
  }
  if (auto every = args.Value("--checkpoint-every")) {
    if (plan->max_size == 0) return UsageError("--checkpoint-every goes with --max-size");
    if (!absl::SimpleAtod(*every, &plan->checkpoint_every) ||
        !(plan->checkpoint_every == 0 || plan->checkpoint_every >= 0.01) || plan->checkpoint_every > 86400) {
      return UsageError(absl::StrCat("bad --checkpoint-every '", *every,
                                     "': expected seconds (0.01 to 86400), or 0 for none"));
    }
  }
  if (args.Has("--max-memory") && plan->max_size == 0) return UsageError("--max-memory goes with --max-size");
  return SizeFlag(args, "--max-memory", &plan->max_memory);
}

absl::StatusOr<RecordPlan> PlanFrom(const Args& args) {
  RecordPlan plan;
  plan.output = args.Value("--output").value_or(session::kDefaultTracePath);
  if (auto pid = args.Value("--pid")) {
    uint32_t v;
    if (!absl::SimpleAtoi(*pid, &v)) return UsageError(absl::StrCat("bad --pid '", *pid, "'"));
    plan.pid = v;
  }
  plan.command = args.positional();
  plan.force = args.Has("--force");
  if (plan.pid.has_value() == !plan.command.empty()) {
    return UsageError("give either -p PID or a command to run (after --)");
  }
  if (args.Has("--per-thread") && !plan.pid) return UsageError("--per-thread goes with -p PID");
  const std::string graph = args.Value("--call-graph").value_or("dwarf");
  if (graph != "dwarf" && graph != "fp") {
    return UsageError(absl::StrCat("bad --call-graph '", graph, "': expected dwarf or fp"));
  }
  plan.call_graph = graph == "fp" ? RecordPlan::CallGraph::kFp : RecordPlan::CallGraph::kDwarf;
  if (auto every = args.Value("--rss-every")) {
    // Below 10 ms the snapshots would be most of what the recorder does.
    if (!absl::SimpleAtod(*every, &plan.rss_every) || !(plan.rss_every == 0 || plan.rss_every >= 0.01) ||
        plan.rss_every > 86400) {
      return UsageError(absl::StrCat("bad --rss-every '", *every, "': expected seconds (0.01 to 86400), or 0 for no snapshots"));
    }
  }
  RETURN_IF_ERROR(FoldingFlags(args, &plan));
  return plan;
}

// --dry-run: the perf command, and where snapshots would go.
int DryRun(const RecordPlan& plan) {
  std::printf("%s\n", absl::StrJoin(plan.PerfArgv(), " ").c_str());
  if (plan.PerfNice() != 0) {
    std::fprintf(stderr, "pageblame record: perf at nice %d once it records (--max-size: a cut must not lose events)\n",
                 plan.PerfNice());
  }
  if (!plan.SnapshotPath().empty()) {
    std::fprintf(stderr, "pageblame record: and residency snapshots every %g s into %s\n", plan.rss_every,
                 plan.SnapshotPath().c_str());
  }
  return 0;
}

// What the recorded runtime needs to be named (a perf map, node's flags),
// from its command line and, for node, NODE_OPTIONS.
void SayRuntimeHints(const RecordPlan& plan) {
  std::vector<std::string> cmdline = plan.pid ? CommandLineOf(*plan.pid) : plan.command;
  const char* own_node_options = std::getenv("NODE_OPTIONS");
  const std::string node_options = plan.pid ? ValueOf(EnvironmentOf(*plan.pid), "NODE_OPTIONS")
                                            : std::string(own_node_options ? own_node_options : "");
  for (absl::string_view opt : absl::StrSplit(node_options, ' ', absl::SkipEmpty())) cmdline.emplace_back(opt);
  for (const std::string& hint : RecordPlan::RuntimeHints(cmdline)) {
    std::fprintf(stderr, "pageblame record: hint: %s\n", hint.c_str());
  }
}

// How perf runs beside the snapshots, for `plan` (files: null for -o -).
recorder::PerfRunOptions RunOptionsFor(const RecordPlan& plan, const PerfAbilities& perf,
                                       recorder::RecordingFiles* files, RuntimeTableSaver* tables) {
  recorder::PerfRunOptions o;
  o.argv = plan.PerfArgv();
  o.env = plan.ExtraEnvironment();
  o.files = files;
  o.attach = plan.pid;
  o.keep_stderr = plan.pid.has_value();
  o.stop_when_attached_ends = !plan.cgroup.empty();
  o.on_snapshot = [tables](const std::vector<uint32_t>& pids, residency::SnapshotReason reason) {
    tables->OnSnapshot(pids, reason);
  };
  o.rss_every = plan.SnapshotPath().empty() ? 0 : plan.rss_every;
  // --max-size: an eighth of it for the snapshots (a half is the index's, a
  // quarter perf's chunk and the one being folded).
  o.snapshot_budget = plan.max_size / 16;
  // Pings also say when perf records (recorder/perf_control.h): snapshots
  // and the table at the attach wait for that.
  o.control = perf.ping;
  o.perf_nice = plan.PerfNice();
  if (plan.pid && plan.cgroup.empty()) o.preload = PerfPollFixFor(plan);
  return o;
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
  // What perf would fail on after its setup, with a message about its
  // events or a half-written trace: said first, in the user's words.
  if (absl::Status target = CheckTarget(*plan); !target.ok()) return ReportError(target);
  plan->available = AvailableSyscalls();
  const PerfAbilities perf = ReadPerfAbilities();
  plan->compress = perf.zstd;
  plan->no_bpf_event = perf.no_bpf_event;
  if (plan->pid && !args->Has("--per-thread")) ChooseCgroup(&*plan);
  if (args->Has("--dry-run")) return DryRun(*plan);
  if (absl::Status s = CheckPermission(); !s.ok()) return ReportError(s);
  SayRuntimeHints(*plan);
  if (absl::Status s = RefuseKilledRecording(*plan); !s.ok()) return ReportError(s);
  std::unique_ptr<recorder::RecordingFiles> files;
  if (plan->output != "-") {
    absl::StatusOr<std::unique_ptr<recorder::RecordingFiles>> made =
        recorder::RecordingFiles::Prepare(plan->output, plan->force);
    if (!made.ok()) return ReportError(made.status());
    files = *std::move(made);
    plan->perf_output = files->perf_output();
    SayWhatWasSetAside(*files);
  }
  std::unique_ptr<recorder::ChunkFolder> folder;
  if (plan->max_size > 0) {
    absl::StatusOr<std::unique_ptr<recorder::ChunkFolder>> started = StartFolding(*plan, *files);
    if (!started.ok()) {
      files->RemoveTraceIfEmpty();  // the empty trace made for perf: nothing was recorded
      return ReportError(started.status());
    }
    folder = *std::move(started);
  }
  RuntimeTableSaver tables(files.get());
  const recorder::PerfRunOptions run_options = RunOptionsFor(*plan, perf, files.get(), &tables);
  const std::optional<recorder::DotnetIpcClient> dotnet =
      plan->pid ? TurnOnDotnetPerfMap(*plan->pid) : std::nullopt;
  const recorder::PerfRunResult run = recorder::RunPerf(run_options);
  if (plan->pid) TurnOffDotnetPerfMap(*plan->pid, dotnet);
  SayAttachMaps(run_options, run);
  if (files) KeepRuntimeFiles(files.get(), *plan, run);
  const int perf_rc = run.perf_exit;
  if (plan->output == "-") {
    // The trace went to standard output, to its reader: nothing to sum up.
    if (perf_rc == 0) return 0;
    return PerfFailed(perf_rc, run, "");
  }
  if (folder) FinishFolding(folder.get());
  if (files->RemoveTraceIfEmpty()) return PerfFailed(perf_rc, run, absl::StrCat("it wrote nothing into ", plan->output));
  const int summarized = Summarize(*plan, run, tables, folder ? &folder->stats() : nullptr);
  if (folder && summarized == 0) SummarizeFolding(*plan, *folder, *files);
  return summarized;
}

}  // namespace pageblame::cli

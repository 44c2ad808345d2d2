#include "processor/cli/record_plan.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "processor/base/format.h"
#include "processor/decode/memory_event_kind.h"
#include "processor/residency/snapshot_file.h"

namespace pageblame::cli {
namespace {

bool HasArg(const std::vector<std::string>& argv, absl::string_view prefix) {
  for (const std::string& a : argv) {
    if (absl::StartsWith(a, prefix)) return true;
  }
  return false;
}

// perf's version from `perf version`'s line, at least major.minor.
bool VersionAtLeast(const std::string& perf_version_line, int want_major, int want_minor) {
  int major = 0, minor = 0;
  if (std::sscanf(perf_version_line.c_str(), "perf version %d.%d", &major, &minor) != 2) return false;
  return major > want_major || (major == want_major && minor >= want_minor);
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

const std::vector<std::string>& RecordPlan::MemorySyscalls() {
  static const std::vector<std::string> kAll = [] {
    std::vector<std::string> all;
    for (int i = 0; i < decode::kSyscallCount; ++i) {
      all.emplace_back(decode::SyscallName(static_cast<decode::Syscall>(i)));
    }
    return all;
  }();
  return kAll;
}

std::vector<std::string> RecordPlan::Syscalls() const {
  std::vector<std::string> out;
  for (const std::string& s : MemorySyscalls()) {
    if (available.empty() || available.count(s)) out.push_back(s);
  }
  return out;
}

std::vector<std::string> RecordPlan::PerfArgv() const {
  std::vector<std::string> argv = {"perf", "record"};
  // The enters carry the call's stack; an exit's would only repeat it.
  const std::string enter_graph = call_graph == CallGraph::kDwarf
                                      ? "call-graph=dwarf,stack-size=16384"
                                      : "call-graph=fp";
  for (const std::string& s : Syscalls()) {
    argv.push_back("-e");
    argv.push_back(absl::StrCat("syscalls:sys_enter_", s, "/", enter_graph, "/"));
    argv.push_back("-e");
    argv.push_back(absl::StrCat("syscalls:sys_exit_", s, "/call-graph=no/"));
  }
  argv.insert(argv.end(), {"-m", BufferSize()});
  if (compress) argv.push_back("-z");
  if (no_bpf_event) argv.push_back("--no-bpf-event");
  argv.insert(argv.end(), {"-k", kClockName});
  if (max_size > 0) argv.push_back(absl::StrCat("--switch-output=", ChunkSize() >> 10, "K"));
  argv.insert(argv.end(), {"-o", perf_output.empty() ? output : perf_output});
  if (pid && !cgroup.empty()) {
    argv.insert(argv.end(), {"-d", "-a", "-G", cgroup});
  } else if (pid) {
    argv.insert(argv.end(), {"-d", "-p", absl::StrCat(*pid)});
  } else {
    argv.push_back("--");
    argv.insert(argv.end(), command.begin(), command.end());
  }
  return argv;
}

// perf pins -m bytes per CPU for as long as it records (-p included), so an
// attached recording takes the smallest size measured to lose nothing
// (bench/attach_overhead.sh, docs/performance.md "Attaching"): with DWARF
// stacks at ~12 k calls/s perf's default buffer kept a quarter of the calls,
// 16M lost none; 32M is twice that. A command's start-up bursts harder: at perf's default a DWARF
// recording lost 87 % of its samples, so it keeps 128M. Frame-pointer
// chains are small.
bool RecordPlan::AnswersPing(const std::string& perf_version_line) {
  return VersionAtLeast(perf_version_line, 5, 12);
}

bool RecordPlan::KnowsNoBpfEvent(const std::string& perf_version_line) {
  return VersionAtLeast(perf_version_line, 5, 1);
}

const char* RecordPlan::BufferSize() const {
  if (call_graph == CallGraph::kFp) return "16M";
  return pid ? "32M" : "128M";
}

// With --max-size perf cuts its output every chunk: it finishes the file,
// renames it and synthesizes again, parsing all of /proc/kallsyms for BPF
// images whatever --no-bpf-event says (perf 6.1's record__synthesize), and
// then compresses what piled up meanwhile in one batch. It reads no ring
// buffer all that while, and it needs the CPU for it at once: at nice 0 on a
// busy 2-core machine (the command churning on one core, builds and the
// folding on the other) a cut took 250-350 ms and perf lost 37-64 % of a
// benchmark loop's events with --max-size 8M (bench/lost.sh,
// bench/HISTORY.md); at nice -10 none in 5 runs of 9, 3-15 % in the others
// (when plain recordings lost up to 2 %). The folding thread stays at nice
// 0: at nice 10 it fell behind and the chunks waiting for it took the disk
// far past --max-size; folding put off to the end did not save perf either.
// The cost: perf's cuts now take the CPU before the command (HISTORY).
int RecordPlan::PerfNice() const { return max_size > 0 ? kMaxSizePerfNice : 0; }

// With --max-size perf loses events mostly at its cuts (PerfNice above), so
// fewer cuts help more than a buffer the user cannot set: a bound of eight
// times what perf wrote a second has it cut about once a second
// (bench/lost.sh lost nothing with cuts every 0.3 s at nice -10).
std::string RecordPlan::LostHint(uint64_t chunks, uint64_t chunk_bytes, double wall_seconds,
                                 const std::string& nice_error) const {
  if (max_size == 0 || chunks == 0 || !(wall_seconds > 0)) {
    return absl::StrCat("a bigger buffer helps: perf record -m (", BufferSize(), " here)");
  }
  constexpr uint64_t kMiB = uint64_t{1} << 20;
  const double per_second = static_cast<double>(chunk_bytes) / wall_seconds;
  const uint64_t once_a_second = (static_cast<uint64_t>(8 * per_second) / kMiB + 1) * kMiB;
  std::string hint = absl::StrCat(
      "with --max-size perf cut its output ", chunks, " times (every ",
      absl::StrFormat("%.2f", wall_seconds / static_cast<double>(chunks)), " s) and reads none of its ",
      BufferSize(), " buffer while it cuts: a larger --max-size cuts less often (", HumanBytes(once_a_second),
      " or more: about once a second at this rate); a less busy machine helps too");
  if (!nice_error.empty()) {
    absl::StrAppend(&hint, "; so would perf's priority, which could not be raised (", nice_error,
                    "): run record as root");
  }
  return hint;
}

uint64_t RecordPlan::ChunkSize() const { return std::max<uint64_t>(max_size / 8, 64 << 10); }

bool RecordPlan::ParseSize(const std::string& text, uint64_t* bytes) {
  if (text.empty()) return false;
  uint64_t unit = 1;
  std::string digits = text;
  switch (text.back()) {
    case 'K': case 'k': unit = 1 << 10; break;
    case 'M': case 'm': unit = 1 << 20; break;
    case 'G': case 'g': unit = 1 << 30; break;
    default: break;
  }
  if (unit != 1) digits.pop_back();
  uint64_t n = 0;
  if (!absl::SimpleAtoi(digits, &n) || n == 0 || n > (uint64_t{1} << 50) / unit) return false;
  *bytes = n * unit;
  return true;
}

std::string RecordPlan::SnapshotPath() const {
  if (rss_every <= 0 || output == "-") return "";
  return residency::SnapshotPathFor(output);
}

// DOTNET_PerfMapStubGranularity=2: .NET 10.0.x's jitdump writer stops at
// the first stub block it cannot read (reserved, not committed), leaving 2
// records (dotnet/runtime#120419; fixed in main by #122274): with stubs
// reported one by one the jitdump is whole, ReadyToRun methods included.
// Older runtimes ignore the variable.
std::vector<std::string> RecordPlan::ExtraEnvironment() const {
  if (pid) return {};
  return {"DOTNET_PerfMapEnabled=1", "DOTNET_PerfMapStubGranularity=2"};
}

std::vector<std::string> RecordPlan::RuntimeHints(const std::vector<std::string>& command_line) {
  std::vector<std::string> hints;
  if (command_line.empty()) return hints;
  const std::string exe = BaseName(command_line[0]);
  if (absl::StartsWith(exe, "node") && !HasArg(command_line, "--perf-basic-prof")) {
    hints.push_back(
        "node names its JIT frames only with --perf-basic-prof (add "
        "--interpreted-frames-native-stack to see interpreted JS functions too)");
  }
  if (exe == "java" && !HasArg(command_line, "-agentpath") && !HasArg(command_line, "-XX:+DumpPerfMapAtExit")) {
    hints.push_back(
        "java names its JIT frames only with a perf map: add -XX:+UnlockDiagnosticVMOptions "
        "-XX:+DumpPerfMapAtExit (JDK 17+), or a perf-map agent");
  }
  return hints;
}

}  // namespace pageblame::cli

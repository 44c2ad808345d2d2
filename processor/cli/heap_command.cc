// `pageblame heap`: inside glibc malloc of a running process (-p PID, read
// without stopping it), of an ELF core, or of a recorded process at a
// moment (-i TRACE --pid PID [--at T]: the heap snapshot `record` took at or
// before T, from TRACE.heap): per arena, bytes in use, free
// (bins, fastbins, tcache, top), free and resident, what malloc_trim(0)
// would give back. The walking is heap/heap_walker.h; the text and JSON
// render/heap_report.h.
#include <cstdio>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "processor/analysis/heap_split.h"
#include "processor/cli/command_spec.h"
#include "processor/cli/commands.h"
#include "processor/cli/output_file.h"
#include "processor/cli/trace_options.h"
#include "processor/cli/usage.h"
#include "processor/heap/core_memory.h"
#include "processor/heap/heap_walker.h"
#include "processor/heap/live_memory.h"
#include "processor/render/heap_report.h"
#include "processor/render/origin_renderer.h"

namespace pageblame::cli {

const CommandSpec& HeapSpec() {
  static const CommandSpec kSpec = [] {
    CommandSpec s;
    s.name = "heap";
    s.help =
        "usage: pageblame heap (-p PID | CORE | -i TRACE --pid PID [--at T]) [--json] [-o FILE]\n"
        "                      [--debug-dir DIR] [--no-debug-info]\n"
        "Inside glibc malloc: is the memory a leak, or free memory glibc holds? Per\n"
        "arena: bytes from the system, in live chunks, free (bins, fastbins, tcache,\n"
        "top), free and resident, and what malloc_trim(0) would give back; the mmapped\n"
        "chunks; threads and arenas against glibc's arena limit (docs/heap.md).\n"
        "A process using jemalloc, tcmalloc, mimalloc or musl is named, not walked.\n"
        "  -p, --pid PID         a running process, read without stopping it (root, or\n"
        "                        its user with ptrace access); resident bytes from its\n"
        "                        /proc/PID/pagemap\n"
        "  CORE                  an ELF core (gcore, dotnet-dump collect); its libc is\n"
        "                        read from this machine by the path the core names\n"
        "  -i, --input TRACE     a recording: the heap snapshot pageblame record took of\n"
        "                        --pid PID at or before --at T (default: the last), from\n"
        "                        TRACE.heap; printed as a live walk is\n"
        "  --at T                perf script seconds, +S, -S or end (as every command)\n"
        "  -f, --force           use a TRACE.heap (or perf map, TRACE.rss) another user\n"
        "                        could have written, in a directory others can write\n"
        "  -v, --verbose         what the trace's load saw\n"
        "  --no-index            replay the trace, neither using nor writing TRACE.index\n"
        "  --json                JSON output (docs/heap.md)\n"
        "  -o, --output FILE     write the answer to FILE instead of standard output\n"
        "  --debug-dir DIR       look for libc's debug file by build id under DIR too\n"
        "                        (DIR/.build-id/xx/rest.debug; default /usr/lib/debug)\n"
        "  --no-debug-info       use no debug file nor symbols: the built-in layout table\n"
        "                        and main_arena found by its shape (as without libc6-dbg)\n";
    s.value_flags = {"--pid", "--output", "--debug-dir", "--input", "--at"};
    s.bool_flags = {"--json", "--no-debug-info", "--force", "--verbose", "--no-index"};
    s.aliases = {{"-p", "--pid"}, {"-o", "--output"}, {"-i", "--input"}, {"-f", "--force"}, {"-v", "--verbose"}};
    s.many_positional = true;
    return s;
  }();
  return kSpec;
}

namespace {

absl::StatusOr<std::unique_ptr<heap::TargetMemory>> OpenTarget(const std::optional<uint32_t>& pid,
                                                               const std::string& core) {
  if (pid) return heap::LiveMemory::Open(*pid);
  return heap::CoreMemory::Open(core);
}

std::string Seconds(uint64_t ns) { return absl::StrFormat("%.6f", ns / 1e9); }

// Why `pid` has no snapshot at or before `at`: which pids and times it has.
absl::Status NoSnapshot(const heap::HeapIndex& h, uint32_t pid, uint64_t at) {
  const std::vector<heap::HeapSnapshot>& v = h.Of(pid);
  if (v.empty()) {
    return absl::NotFoundError(absl::StrCat(h.path(), ": no heap snapshot of pid ", pid, " (snapshots of pids: ",
                                            h.size() == 0 ? "none" : absl::StrJoin(h.pids(), ", "),
                                            "; a process whose malloc is not glibc's has none)"));
  }
  return absl::NotFoundError(absl::StrCat(h.path(), ": no heap snapshot of pid ", pid, " at or before ",
                                          Seconds(at), " s of the program it ran then (its snapshots: ", v.size(),
                                          ", the first at ", Seconds(*v.front().time), " s)"));
}

// -i TRACE --pid PID [--at T]: the recorded snapshot, printed as a live walk.
int RunRecorded(const Args& args) {
  if (!args.positional().empty()) return CommandUsage(HeapSpec(), "give either -i TRACE or a CORE file, not both");
  if (!args.Value("--pid")) return CommandUsage(HeapSpec(), "-i TRACE needs --pid PID: the process whose heap");
  auto sel = ParseSelection(args);
  if (!sel.ok()) return ReportError(sel.status());
  auto out = OutputFile::Open(args.Value("--output"), args.ValuesExcept("--output"));
  if (!out.ok()) return ReportError(out.status());
  // TRACE.heap is read once the pid is known to be the trace's (a usage
  // error first), and must load: it is the answer.
  session::HeapRequest later;
  later.off = true;
  auto trace = LoadFromArgs(args, /*rss_required=*/false, later);
  if (!trace.ok()) return ReportError(trace.status());
  auto resolved = Resolve(*sel, **trace, /*by_commit=*/false);
  if (!resolved.ok()) return ReportError(resolved.status());
  session::HeapRequest required;
  required.required = true;
  auto load = session::LoadHeap((*trace)->Facts(), (*trace)->path(), required, (*trace)->force());
  if (!load.ok()) return ReportError(load.status());
  const heap::HeapIndex& h = *load->index;
  // The pid's process entry at T (the newest begun by then: an exec starts
  // one), and its snapshot: one taken before that entry began is another
  // program's heap (the command's pid walked before its exec).
  const index::TraceIndex& idx = (*trace)->index();
  if (resolved->processes.empty()) return ReportError(NoSnapshot(h, *resolved->pid, resolved->at));
  uint32_t entry = resolved->processes.front();
  for (uint32_t p : resolved->processes) {
    if (idx.process(p).t_start <= resolved->at) entry = p;
  }
  // The walk that goes with the residency snapshot for T, as attribute,
  // maps, query and growth take it.
  const heap::HeapSnapshot* s =
      analysis::HeapView(&h, idx).SnapshotFor(entry, resolved->at, analysis::ResidentView((*trace)->residency(), idx));
  if (s == nullptr) return ReportError(NoSnapshot(h, *resolved->pid, resolved->at));
  const std::string text = args.Has("--json") ? render::DumpJson(render::HeapJson(*s)) + "\n"
                                              : render::HeapText(*s, absl::StrCat("pid ", s->pid));
  absl::Status written = (*out)->Write(text);
  if (written.ok()) written = (*out)->Close();
  return written.ok() ? kExitOk : ReportError(written);
}

int Run(const Args& args) {
  if (args.Value("--input")) return RunRecorded(args);
  if (args.Value("--at")) return CommandUsage(HeapSpec(), "--at needs -i TRACE (a live walk or a core is one moment)");
  const std::optional<std::string> pid_text = args.Value("--pid");
  if (pid_text.has_value() == (args.positional().size() == 1) || args.positional().size() > 1)
    return CommandUsage(HeapSpec(), "give either a CORE file or -p PID");
  std::optional<uint32_t> pid;
  uint32_t v = 0;
  if (pid_text && (!absl::SimpleAtoi(*pid_text, &v) || v == 0))
    return CommandUsage(HeapSpec(), absl::StrCat("bad --pid '", *pid_text, "': expected a process id"));
  if (pid_text) pid = v;
  heap::HeapWalkOptions options;
  options.libc.use_debug_info = !args.Has("--no-debug-info");
  if (auto dir = args.Value("--debug-dir")) options.libc.debug_dirs.insert(options.libc.debug_dirs.begin(), *dir);
  auto out = OutputFile::Open(args.Value("--output"), args.ValuesExcept("--output"));
  if (!out.ok()) return ReportError(out.status());
  auto target = OpenTarget(pid, pid ? "" : args.positional()[0]);
  if (!target.ok()) return ReportError(target.status());
  auto snapshot = heap::HeapWalker::Walk(target->get(), options);
  if (!snapshot.ok()) return ReportError(snapshot.status());
  const std::string name = pid ? absl::StrCat("pid ", *pid) : args.positional()[0];
  const std::string text = args.Has("--json") ? render::DumpJson(render::HeapJson(*snapshot)) + "\n"
                                              : render::HeapText(*snapshot, name);
  absl::Status written = (*out)->Write(text);
  if (written.ok()) written = (*out)->Close();
  if (!written.ok()) return ReportError(written);
  return kExitOk;
}

}  // namespace

int RunHeap(const std::vector<std::string>& argv) {
  int rc = 0;
  std::optional<Args> args = ParseCommand(HeapSpec(), argv, &rc);
  if (!args) return rc;
  return Run(*args);
}

}  // namespace pageblame::cli

// `pageblame heap`: inside glibc malloc of a running process (-p PID, read
// without stopping it) or of an ELF core: per arena, bytes in use, free
// (bins, fastbins, tcache, top), free and resident, what malloc_trim(0)
// would give back. The walking is heap/heap_walker.h; the text and JSON
// render/heap_report.h.
#include <cstdio>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "processor/cli/command_spec.h"
#include "processor/cli/commands.h"
#include "processor/cli/output_file.h"
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
        "usage: pageblame heap (-p PID | CORE) [--json] [-o FILE] [--debug-dir DIR] [--no-debug-info]\n"
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
        "  --json                JSON output (docs/heap.md)\n"
        "  -o, --output FILE     write the answer to FILE instead of standard output\n"
        "  --debug-dir DIR       look for libc's debug file by build id under DIR too\n"
        "                        (DIR/.build-id/xx/rest.debug; default /usr/lib/debug)\n"
        "  --no-debug-info       use no debug file nor symbols: the built-in layout table\n"
        "                        and main_arena found by its shape (as without libc6-dbg)\n";
    s.value_flags = {"--pid", "--output", "--debug-dir"};
    s.bool_flags = {"--json", "--no-debug-info"};
    s.aliases = {{"-p", "--pid"}, {"-o", "--output"}};
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

int Run(const Args& args) {
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

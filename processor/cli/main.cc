// pageblame: which call stack created this memory page?
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "processor/cli/commands.h"
#include "processor/cli/trace_options.h"

namespace {

constexpr char kUsage[] =
    "usage: pageblame COMMAND [options]\n"
    "\n"
    "Replays a perf recording of a process's memory syscalls (mmap, munmap, brk,\n"
    "mremap, with call stacks) and says which call stack created any page.\n"
    "\n"
    "commands:\n"
    "  maps   -i TRACE [--pid PID] [--at T] [--json]    the address space, with origins\n"
    "  query  -i TRACE [--pid PID] [--at T] [--history] [--json] ADDR...\n"
    "                                                   who created the page at ADDR\n"
    "  diff   ADDRESS_TABLE RUNTIME_TABLE [--json]      bytes one region table has and the other not\n"
    "  attribute -i TRACE (--regions FILE | --address A --maddress M) [--pid PID] [--at T]\n"
    "         [--format text|json|folded]               which stacks created those regions\n"
    "\n"
    "Record a trace with:\n"
    "  perf trace record --call-graph fp -p PID \\\n"
    "    -e 'syscalls:*_mmap,syscalls:*_munmap,syscalls:*_brk,syscalls:*_mremap' -o trace.data\n"
    "Run 'pageblame COMMAND --help' for a command's options.\n";

}  // namespace

namespace pageblame::cli {

int ReportError(const absl::Status& s) {
  std::fprintf(stderr, "pageblame: %s\n", std::string(s.message()).c_str());
  return s.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
}

}  // namespace pageblame::cli

namespace {

// Leaves without running destructors (see LoadFromArgs): the output is
// flushed first, so nothing is lost, and a failed write (disk full, closed
// pipe) is an error, not a silent truncation.
[[noreturn]] void Exit(int code) {
  if ((std::fflush(stdout) != 0 || std::ferror(stdout)) && code == 0) {
    std::fprintf(stderr, "pageblame: writing the output failed: %s\n", std::strerror(errno));
    code = 1;
  }
  pageblame::cli::PrintSymbolStats();
  std::fflush(stderr);
  std::_Exit(code);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  // Answers can be many MB (maps --json of a big process): written to a
  // file or pipe in 1 MiB pieces rather than stdio's 4 KiB (a write call per
  // 4 KiB was ~1900 calls for the bench trace's map). A terminal keeps
  // stdio's line buffering.
  if (!isatty(STDOUT_FILENO)) {
    static char out_buffer[1 << 20];
    std::setvbuf(stdout, out_buffer, _IOFBF, sizeof(out_buffer));
  }
  std::string cmd = argv[1];
  std::vector<std::string> rest(argv + 2, argv + argc);
  if (cmd == "maps") Exit(pageblame::cli::RunMaps(rest));
  if (cmd == "query") Exit(pageblame::cli::RunQuery(rest));
  if (cmd == "diff") Exit(pageblame::cli::RunDiff(rest));
  if (cmd == "attribute") Exit(pageblame::cli::RunAttribute(rest));
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::fprintf(stderr, "pageblame: unknown command '%s'\n%s", cmd.c_str(), kUsage);
  return 2;
}

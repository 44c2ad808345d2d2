// pageblame: which call stack created — and which committed — this memory page?
#include <malloc.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "processor/base/build_info.h"
#include "processor/cli/command_registry.h"
#include "processor/cli/trace_options.h"
#include "processor/cli/usage.h"

namespace {

std::string Usage() {
  std::string out =
      "usage: pageblame COMMAND [options]\n"
      "\n"
      "Replays a perf recording of a process's memory syscalls (mmap, munmap, brk,\n"
      "mremap, mprotect, madvise, with call stacks) and says which call stack created,\n"
      "and which committed, any page, and what happened to it since.\n"
      "\n"
      "commands:\n";
  for (const pageblame::cli::Command& c : pageblame::cli::AllCommands()) {
    absl::StrAppend(&out, absl::StrFormat("  %-14s %s\n", c.spec->name, c.summary));
  }
  absl::StrAppend(&out,
                  "\n"
                  "Start with:\n"
                  "  sudo pageblame record -o trace.data -- ./program args   (or -p PID)\n"
                  "  pageblame maps -i trace.data\n"
                  "Run 'pageblame COMMAND --help' for a command's options; --version for the build.\n");
  return out;
}

// Leaves without running destructors (see LoadFromArgs): the output is
// flushed first, so nothing is lost, and a failed write (disk full, closed
// pipe) is an error, not a silent truncation.
[[noreturn]] void Exit(int code) {
  if ((std::fflush(stdout) != 0 || std::ferror(stdout)) && code == 0) {
    std::fprintf(stderr, "pageblame: writing the output failed: %s\n", std::strerror(errno));
    code = pageblame::cli::kExitBadInput;
  }
  pageblame::cli::PrintSymbolStats();
  std::fflush(stderr);
  std::_Exit(code);
}

int UnknownCommand(const std::string& cmd) {
  std::vector<std::string> names;
  for (const pageblame::cli::Command& c : pageblame::cli::AllCommands()) names.push_back(c.spec->name);
  std::fprintf(stderr, "pageblame: unknown command '%s'%s\n%s", cmd.c_str(),
               pageblame::cli::DidYouMean(cmd, names).c_str(), Usage().c_str());
  return pageblame::cli::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  // glibc returns freed memory to the kernel (blocks from 128 KiB up are
  // mappings of their own, and the heap's free top is trimmed), and every
  // allocation after that takes fresh pages, which cost a fault each.
  // Symbol tables and answers grow by doubling, so they would fault in again
  // pages they had just freed. Kept in the heap, freed memory is reused
  // instead; a command's peak memory is the same (bench/HISTORY.md).
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  if (argc < 2) {
    std::fputs(Usage().c_str(), stderr);
    return pageblame::cli::kExitUsage;
  }
  // Answers can be many MB (maps --json of a big process): written to a
  // file or pipe in 1 MiB pieces rather than stdio's 4 KiB (one write call
  // per 4 KiB). A terminal keeps stdio's line buffering.
  if (!isatty(STDOUT_FILENO)) {
    static char out_buffer[1 << 20];
    std::setvbuf(stdout, out_buffer, _IOFBF, sizeof(out_buffer));
  }
  const std::string cmd = argv[1];
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    std::fputs(Usage().c_str(), stdout);
    return 0;
  }
  if (cmd == "--version" || cmd == "version") {
    std::printf("%s\n", pageblame::ThisBuild().c_str());
    return 0;
  }
  const pageblame::cli::Command* c = pageblame::cli::FindCommand(cmd);
  if (c == nullptr) return UnknownCommand(cmd);
  const std::vector<std::string> args(argv + 2, argv + argc);
  Exit(pageblame::cli::RunGuarded([&] { return c->run(args); }));
}

// ChildProcess: runs another program (the dotnet-regions helper) and
// collects what it prints, for commands that delegate part of their work.
//
//   ASSIGN_OR_RETURN(ChildProcess::Result r, ChildProcess::Run({"dotnet", dll, "--pid", "42"}));
//   if (r.exit_code != 0) ... r.err ...
//
// Standard output and standard error are read together (poll), so a child
// that fills one pipe while we wait on the other cannot deadlock; each is
// kept up to kMaxOutput bytes (more is an error: a runaway child). The child
// inherits standard input and the process group, so a terminal's Ctrl-C
// reaches it as it reaches pageblame.
#ifndef PAGEBLAME_CLI_CHILD_PROCESS_H_
#define PAGEBLAME_CLI_CHILD_PROCESS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace pageblame::cli {

class ChildProcess {
 public:
  static constexpr size_t kMaxOutput = size_t{256} << 20;

  struct Result {
    int exit_code = 0;  // the child's exit status; 128 + N if signal N killed it
    std::string out, err;
  };

  // `argv[0]` is looked up in PATH. An error if it cannot be started
  // (then the message names it), or prints more than kMaxOutput.
  static absl::StatusOr<Result> Run(const std::vector<std::string>& argv);

  // The program a name runs, looked up in PATH as execvp would, or "".
  static std::string FindInPath(const std::string& name);
};

}  // namespace pageblame::cli

#endif  // PAGEBLAME_CLI_CHILD_PROCESS_H_

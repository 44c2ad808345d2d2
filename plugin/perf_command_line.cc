#include "plugin/perf_command_line.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "processor/session/session.h"

namespace pageblame::plugin {

absl::StatusOr<std::vector<std::string>> ReadOwnCommandLine() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  if (!in) return absl::UnavailableError("cannot read /proc/self/cmdline");
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // NUL-separated, NUL-terminated (fs/proc/base.c, proc_pid_cmdline_read).
  std::vector<std::string> argv;
  size_t pos = 0;
  while (pos < all.size()) {
    size_t nul = all.find('\0', pos);
    if (nul == std::string::npos) nul = all.size();
    argv.push_back(all.substr(pos, nul - pos));
    pos = nul + 1;
  }
  return argv;
}

bool StdinIsFifo() {
  struct stat st;
  return fstat(STDIN_FILENO, &st) == 0 && S_ISFIFO(st.st_mode);
}

std::string TraceInputFromArgv(const std::vector<std::string>& argv, bool stdin_is_fifo) {
  size_t i = 0;
  while (i < argv.size() && argv[i] != "script") ++i;
  std::string input;
  for (++i; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--") break;  // parse-options stops here
    if (a == "-i" || (a.size() >= 5 && absl::StartsWith("--input", a))) {
      // "--inp" .. "--input": a separate value follows (if any).
      if (i + 1 < argv.size()) input = argv[++i];
    } else if (absl::StartsWith(a, "-i") && !absl::StartsWith(a, "--")) {
      input = a.substr(2);
    } else if (absl::StartsWith(a, "--inp") && a.find('=') != std::string::npos) {
      std::string name = a.substr(0, a.find('='));
      if (absl::StartsWith("--input", name)) input = a.substr(a.find('=') + 1);
    }
  }
  if (!input.empty()) return input;
  return stdin_is_fifo ? "-" : session::kDefaultTracePath;
}

namespace {

// The value of option `name` at argv[*i] ("--name V" or "--name=V"), moving
// *i past a separate value; nullopt if argv[*i] is another argument.
std::optional<std::string> OptionValue(const std::vector<std::string>& argv, size_t* i,
                                       const std::string& name) {
  const std::string& a = argv[*i];
  if (a == name) return *i + 1 < argv.size() ? std::optional<std::string>(argv[++*i]) : std::nullopt;
  if (absl::StartsWith(a, name + "=")) return a.substr(name.size() + 1);
  return std::nullopt;
}

}  // namespace

PerfSymbolPaths SymbolPathsFromArgv(const std::vector<std::string>& argv, const char* env_buildid_dir) {
  PerfSymbolPaths p;
  if (env_buildid_dir != nullptr) p.buildid_dir = env_buildid_dir;
  bool in_script = false;
  for (size_t i = 1; i < argv.size(); ++i) {
    if (argv[i] == "--") break;
    if (!in_script && argv[i] == "script") {
      in_script = true;
    } else if (auto dir = OptionValue(argv, &i, "--buildid-dir"); dir && !in_script) {
      p.buildid_dir = *dir;
    } else if (auto symfs = OptionValue(argv, &i, "--symfs"); symfs && in_script) {
      p.symfs = *symfs;
    }
  }
  return p;
}

bool ForceFromArgv(const std::vector<std::string>& argv) {
  size_t i = 0;
  while (i < argv.size() && argv[i] != "script") ++i;
  bool force = false;
  for (++i; i < argv.size() && argv[i] != "--"; ++i) {
    if (argv[i] == "-f" || argv[i] == "--force") force = true;
    if (argv[i] == "--no-force") force = false;
  }
  return force;
}

absl::Status CheckRereadable(const std::string& path) {
  struct stat st;
  bool pipe = path == "-" || (stat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode));
  if (!pipe) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "perf script reads ", path == "-" ? "a pipe (stdin)" : absl::StrCat("the FIFO ", path),
      ", which the plugin cannot read a second time; save the recording to a file and pass "
      "--dlarg trace=FILE (or run perf script -i FILE)"));
}

}  // namespace pageblame::plugin

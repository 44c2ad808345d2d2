// Runs other programs the CLI tests check pageblame's files with (go tool
// pprof, headless Chromium), and says whether they are installed.
// scripts/setup installs them; in CI (CI=true) or with
// PAGEBLAME_REQUIRE_TOOLS=1 a missing tool fails the test, elsewhere the test
// is skipped.
#ifndef PAGEBLAME_TESTS_TOOL_RUNNER_H_
#define PAGEBLAME_TESTS_TOOL_RUNNER_H_

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "tests/cli_runner.h"

namespace pageblame::testing {

// `sh -c CMD`, stdout and stderr captured.
inline CliRun Shell(const std::string& cmd) {
  static int calls = 0;
  const std::string err_file = ::testing::TempDir() + "/tool-stderr-" + std::to_string(getpid()) + "-" +
                               std::to_string(calls++) + ".txt";
  CliRun r;
  FILE* p = popen(("(" + cmd + ") 2>" + err_file).c_str(), "r");
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.crashed = WIFSIGNALED(status);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream e(err_file);
  r.err.assign(std::istreambuf_iterator<char>(e), {});
  std::remove(err_file.c_str());
  return r;
}

inline bool HaveTool(const std::string& path) { return access(path.c_str(), X_OK) == 0; }
inline bool ToolsRequired() {
  const char* v = std::getenv("PAGEBLAME_REQUIRE_TOOLS");
  const char* ci = std::getenv("CI");
  return (v != nullptr && std::string(v) == "1") || (ci != nullptr && std::string(ci) == "true");
}

// In a test body: skips (or, with PAGEBLAME_REQUIRE_TOOLS=1, fails) when
// `path` is not installed.
#define PB_REQUIRE_TOOL(path)                                                            \
  do {                                                                                   \
    if (!::pageblame::testing::HaveTool(path)) {                                         \
      if (::pageblame::testing::ToolsRequired()) FAIL() << (path) << " is not installed"; \
      GTEST_SKIP() << (path) << " is not installed (scripts/test installs it)";         \
    }                                                                                    \
  } while (0)

}  // namespace pageblame::testing

#endif  // PAGEBLAME_TESTS_TOOL_RUNNER_H_

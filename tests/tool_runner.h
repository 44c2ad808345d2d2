// Whether the other programs the CLI tests check pageblame's files with (go
// tool pprof, headless Chromium) are installed; run them with Shell()
// (cli_runner.h).
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

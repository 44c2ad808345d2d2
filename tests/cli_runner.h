// Runs the built pageblame binary as a user would, for the CLI tests.
#ifndef PAGEBLAME_TESTS_CLI_RUNNER_H_
#define PAGEBLAME_TESTS_CLI_RUNNER_H_

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <regex>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pageblame::testing {

struct CliRun {
  int exit_code = -1;
  bool crashed = false;
  std::string out, err;
};

// A shell command line, with stdout and stderr captured.
inline CliRun Shell(const std::string& command) {
  // ctest runs test cases as parallel processes: names must not collide.
  static int calls = 0;
  std::string err_file = ::testing::TempDir() + "/pageblame-stderr-" + std::to_string(getpid()) +
                         "-" + std::to_string(calls++) + ".txt";
  std::string cmd = "(" + command + ") 2>" + err_file;
  CliRun r;
  FILE* p = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.crashed = WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) >= 128);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream e(err_file);
  r.err.assign(std::istreambuf_iterator<char>(e), {});
  std::remove(err_file.c_str());
  return r;
}

// `build/bin/pageblame ARGS`, with stdout and stderr captured.
inline CliRun Pageblame(const std::string& args) {
  return Shell(std::string(PAGEBLAME_BINARY_DIR) + "/bin/pageblame " + args);
}

// Bad input: one line "pageblame: ..." (or "pageblame COMMAND: ..." for a
// usage mistake) naming the problem, a non-zero exit, nothing on stdout, no
// crash. Notes about the trace ("pageblame: note: ...") may come before it.
inline void ExpectOneLineError(const CliRun& r, const std::string& must_contain) {
  EXPECT_FALSE(r.crashed);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(r.out.empty()) << r.out;
  std::string err;
  for (size_t at = 0; at < r.err.size();) {
    size_t nl = r.err.find('\n', at);
    nl = nl == std::string::npos ? r.err.size() : nl + 1;
    std::string line = r.err.substr(at, nl - at);
    if (line.rfind("pageblame: note: ", 0) != 0) err += line;
    at = nl;
  }
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << r.err;
  EXPECT_THAT(err, ::testing::HasSubstr(must_contain));
  EXPECT_TRUE(std::regex_search(err, std::regex("^pageblame( [a-z-]+)?: "))) << r.err;
}

}  // namespace pageblame::testing

#endif  // PAGEBLAME_TESTS_CLI_RUNNER_H_

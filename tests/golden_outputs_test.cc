// Every command on every bundled trace, its outputs as they were: stdout,
// stderr and the exit code of each line of tests/golden/commands.txt must
// hash as tests/golden/outputs.tsv says. It holds answers still while code
// moves (issue 43: outputs byte-identical before and after a restructuring),
// and shows every change of an answer that was meant: then regenerate
//   PAGEBLAME_UPDATE_GOLDEN=1 build/tests/golden_outputs_test
// and read the diff of outputs.tsv with the change that made it.
//
// One test per group (a trace): ctest runs them in parallel.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/cli_runner.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

struct Command {
  std::string group, args;
};

std::string CommandsPath() { return SourceDir() + "/tests/golden/commands.txt"; }
std::string OutputsPath() { return SourceDir() + "/tests/golden/outputs.tsv"; }

std::vector<Command> ReadCommands() {
  std::vector<Command> out;
  std::ifstream f(CommandsPath());
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> parts = absl::StrSplit(line, absl::MaxSplits('\t', 1));
    if (parts.size() == 2) out.push_back({parts[0], parts[1]});
  }
  return out;
}

// FNV-1a, 64 bits: stable across machines and builds (absl::Hash is not).
std::string Fnv(const std::string& bytes) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return absl::StrFormat("%016x", h);
}

// "out_hash<TAB>err_hash<TAB>exit", what outputs.tsv keeps per command.
std::string Fingerprint(const CliRun& r) {
  return absl::StrCat(Fnv(r.out), "\t", Fnv(r.err), "\t", r.exit_code);
}

CliRun RunCommand(const Command& c) {
  // From the source directory, as the arguments are relative to it; with
  // no $COLUMNS, so that text is as a pipe gets it (cli/terminal_width.h).
  return Shell(absl::StrCat("cd ", SourceDir(), " && env -u COLUMNS ", PAGEBLAME_BINARY_DIR, "/bin/pageblame ", c.args));
}

// args -> fingerprint.
std::map<std::string, std::string> ReadOutputs() {
  std::map<std::string, std::string> out;
  std::ifstream f(OutputsPath());
  std::string line;
  while (std::getline(f, line)) {
    std::vector<std::string> parts = absl::StrSplit(line, absl::MaxSplits('\t', 3));
    if (parts.size() == 4) out[parts[3]] = absl::StrCat(parts[0], "\t", parts[1], "\t", parts[2]);
  }
  return out;
}

std::vector<std::string> Groups() {
  std::vector<std::string> groups;
  for (const Command& c : ReadCommands()) {
    if (std::find(groups.begin(), groups.end(), c.group) == groups.end()) groups.push_back(c.group);
  }
  return groups;
}

class GoldenOutputsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenOutputsTest, OutputsAreAsRecorded) {
  const std::map<std::string, std::string> expected = ReadOutputs();
  int ran = 0;
  for (const Command& c : ReadCommands()) {
    if (c.group != GetParam()) continue;
    ++ran;
    const CliRun r = RunCommand(c);
    EXPECT_FALSE(r.crashed) << c.args;
    auto it = expected.find(c.args);
    ASSERT_NE(it, expected.end()) << "no recorded output for: " << c.args
                                  << " (PAGEBLAME_UPDATE_GOLDEN=1 build/tests/golden_outputs_test)";
    EXPECT_EQ(Fingerprint(r), it->second)
        << "pageblame " << c.args << "\nexit " << r.exit_code << "\nstdout (start):\n"
        << r.out.substr(0, 1500) << "\nstderr (start):\n"
        << r.err.substr(0, 1500);
    // The same answer when the trace is replayed, whether or not the command
    // above loaded TRACE.index (replay/recording_file.h): every JSON answer
    // again with --no-index.
    if (absl::StrContains(c.args, "-i ") && absl::StrContains(c.args, "json")) {
      const CliRun replayed = RunCommand({c.group, c.args + " --no-index"});
      EXPECT_EQ(Fingerprint(replayed), it->second) << "pageblame " << c.args << " --no-index\nstderr (start):\n"
                                                   << replayed.err.substr(0, 1500);
    }
  }
  EXPECT_GT(ran, 0);
}

INSTANTIATE_TEST_SUITE_P(Traces, GoldenOutputsTest, ::testing::ValuesIn(Groups()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string n = i.param;
                           for (char& ch : n) {
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace pageblame::testing

// PAGEBLAME_UPDATE_GOLDEN=1: runs every command and rewrites outputs.tsv.
int main(int argc, char** argv) {
  if (const char* update = std::getenv("PAGEBLAME_UPDATE_GOLDEN"); update != nullptr && *update == '1') {
    using namespace pageblame::testing;
    std::ofstream out(OutputsPath());
    for (const Command& c : ReadCommands()) out << Fingerprint(RunCommand(c)) << "\t" << c.args << "\n";
    std::fprintf(stderr, "wrote %s\n", OutputsPath().c_str());
    return 0;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

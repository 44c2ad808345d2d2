// The README's example is what the tool prints: its command, run from the
// checkout as the README shows it, gives the README's output to the byte.
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "tests/cli_runner.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

struct Example {
  std::string command;  // after "$ build/bin/pageblame "
  std::string output;
};

// The first ``` block of the README section `heading` that starts with a
// "$ build/bin/pageblame" line.
Example ExampleIn(const std::string& heading) {
  std::ifstream f(SourceDir() + "/README.md");
  std::string line;
  bool in_section = false, in_block = false;
  Example e;
  while (std::getline(f, line)) {
    if (absl::StartsWith(line, "## ")) in_section = line == "## " + heading;
    if (!in_section) continue;
    if (absl::StartsWith(line, "```")) {
      if (in_block && !e.command.empty()) return e;
      in_block = !in_block;
      continue;
    }
    if (!in_block) continue;
    absl::string_view rest = line;
    if (e.command.empty() && absl::ConsumePrefix(&rest, "$ build/bin/pageblame ")) {
      e.command = std::string(rest);
    } else if (!e.command.empty()) {
      e.output += line + "\n";
    }
  }
  return e;
}

TEST(ReadmeTest, TheRealExampleIsWhatTheToolPrints) {
  Example e = ExampleIn("A real example");
  ASSERT_FALSE(e.command.empty()) << "no '$ build/bin/pageblame' line in README's 'A real example'";
  // The README's paths are relative to the checkout.
  CliRun r = Shell("cd " + SourceDir() + " && " + PAGEBLAME_BINARY_DIR + "/bin/pageblame " + e.command);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, e.output);
}

TEST(ReadmeTest, TheGrowthExampleIsWhatTheToolPrints) {
  Example e = ExampleIn("What grew between two moments");
  ASSERT_FALSE(e.command.empty()) << "no '$ build/bin/pageblame' line in README's growth section";
  CliRun r = Shell("cd " + SourceDir() + " && " + PAGEBLAME_BINARY_DIR + "/bin/pageblame " + e.command);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, e.output);
}

TEST(ReadmeTest, TheResidentExampleIsWhatTheToolPrints) {
  Example e = ExampleIn("Resident memory");
  ASSERT_FALSE(e.command.empty()) << "no '$ build/bin/pageblame' line in README's 'Resident memory'";
  CliRun r = Shell("cd " + SourceDir() + " && " + PAGEBLAME_BINARY_DIR + "/bin/pageblame " + e.command);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, e.output);
}

}  // namespace
}  // namespace pageblame::testing

// docs/cli.md, "Errors and warnings, as the tool prints them": every `$ pageblame ...`
// example there is run, in a directory holding the files it names, and must
// print exactly the line the page shows, with the exit status its block
// says (bad input 1, bad usage 2). A newcomer can trust the page.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "tests/cli_runner.h"
#include "tests/trace_fixtures.h"
#include "tests/trace_patcher.h"

namespace pageblame::testing {
namespace {

struct Example {
  std::string command;   // after "$ pageblame "
  std::string expected;  // the line it prints on stderr
  int exit_code;
};

// The examples of the section, with the exit status of the block they are in.
std::vector<Example> ReadExamples() {
  std::ifstream in(SourceDir() + "/docs/cli.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const size_t section = doc.find("## Errors and warnings, as the tool prints them");
  EXPECT_NE(section, std::string::npos);
  std::vector<Example> out;
  int exit_code = 0;
  std::vector<std::string> lines = absl::StrSplit(doc.substr(section), '\n');
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    if (absl::StartsWith(lines[i], "Bad input (exit 1)")) exit_code = 1;
    if (absl::StartsWith(lines[i], "Bad usage (exit 2)")) exit_code = 2;
    absl::string_view line = lines[i];
    if (absl::ConsumePrefix(&line, "$ pageblame ")) {
      out.push_back({std::string(line), lines[i + 1], exit_code});
    }
  }
  return out;
}

// The files the examples name, made in `dir`.
void MakeFiles(const std::string& dir) {
  const std::string trace = TracePath("alloc-fp.data");
  absl::StatusOr<TracePatcher> t = TracePatcher::Open(trace);
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(t->Save(dir + "/trace.data").ok());
  std::ofstream(dir + "/empty.data").close();
  ASSERT_EQ(mkdir((dir + "/adir").c_str(), 0755), 0);
  std::ofstream(dir + "/notperf.data") << "This is not a perf file at all\n";
  std::ofstream(dir + "/cut.data", std::ios::binary) << t->bytes().substr(0, 20000);
  const uint64_t at = t->FirstSampleTypeOffset();
  t->Write(at, t->Read(at) ^ 1);
  ASSERT_TRUE(t->Save(dir + "/bad-sample-type.data").ok());
}

TEST(ExitDocsTest, EveryExampleIsWhatTheToolPrints) {
  const std::string dir = ScratchPath("exit-docs");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  MakeFiles(dir);
  const std::vector<Example> examples = ReadExamples();
  EXPECT_GE(examples.size(), 10u);
  for (const Example& e : examples) {
    SCOPED_TRACE(e.command);
    const CliRun r = Shell("cd " + dir + " && " + PAGEBLAME_BINARY_DIR + "/bin/pageblame " +
                           e.command);
    EXPECT_EQ(r.exit_code, e.exit_code) << r.err;
    // Notes about the trace (the libc-cut hint of this fp trace) may come
    // first: the page shows the error or warning lines only.
    std::string err;
    for (absl::string_view line : absl::StrSplit(r.err, '\n', absl::SkipEmpty())) {
      if (!absl::StartsWith(line, "pageblame: note: ")) absl::StrAppend(&err, line, "\n");
    }
    EXPECT_EQ(err, e.expected + "\n");
  }
}

}  // namespace
}  // namespace pageblame::testing

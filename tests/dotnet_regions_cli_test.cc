// `pageblame dotnet-regions` refusing bad input with one clear line: what
// is checked before the ClrMD helper runs (a dump without its memory, a
// file that is no core, a missing process, usage). The live runs, and a
// missing helper or dotnet, are in dotnet_regions_test.cc.
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli_runner.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

// Checked before the helper runs: no dotnet or helper needed.
TEST(DotnetRegionsCliTest, BadInput) {
  struct Case {
    std::string args, message;
    int exit_code;
  } cases[] = {
      {"dotnet-regions " + SourceDir() + "/processor/regions/testdata/dotnet-regions-app.core.trim",
       "the core holds none of its memory", 1},
      {"dotnet-regions " + TracePath("dotnet/dotnet-leak.23474.eeheap.txt"), "not an ELF core dump", 1},
      {"dotnet-regions /nonexistent.core", "/nonexistent.core", 1},
      {"dotnet-regions -p 2147483647", "no process 2147483647", 1},
      {"dotnet-regions", "give either a CORE file or -p PID", 2},
      {"dotnet-regions -p 1 x.core", "give either a CORE file or -p PID", 2},
      {"dotnet-regions -p abc", "bad --pid 'abc'", 2},
  };
  for (const Case& c : cases) {
    CliRun r = Pageblame(c.args);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.args << "\n" << r.err;
    ExpectOneLineError(r, c.message);
  }
}

}  // namespace
}  // namespace pageblame::testing

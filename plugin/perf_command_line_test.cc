#include "plugin/perf_command_line.h"

#include <sys/stat.h>
#include <unistd.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pageblame::plugin {
namespace {

TEST(PerfCommandLineTest, InputSpellings) {
  EXPECT_EQ(TraceInputFromArgv({"perf", "script", "-i", "a.data"}, false), "a.data");
  EXPECT_EQ(TraceInputFromArgv({"perf", "script", "-ia.data"}, false), "a.data");
  EXPECT_EQ(TraceInputFromArgv({"perf", "script", "--input", "a.data"}, false), "a.data");
  EXPECT_EQ(TraceInputFromArgv({"perf", "script", "--input=a.data"}, false), "a.data");
  EXPECT_EQ(TraceInputFromArgv({"perf", "script", "--inp=a.data"}, false), "a.data");
  EXPECT_EQ(TraceInputFromArgv({"perf", "script", "--inp", "a.data"}, false), "a.data");
  // The last one wins, as in perf's parse-options.
  EXPECT_EQ(TraceInputFromArgv({"perf", "script", "-i", "a", "--dlfilter", "x.so", "-i", "b"}, false),
            "b");
}

TEST(PerfCommandLineTest, DefaultsLikePerf) {
  EXPECT_EQ(TraceInputFromArgv({"perf", "script", "--dlfilter", "x.so"}, false), "perf.data");
  EXPECT_EQ(TraceInputFromArgv({"perf", "script", "--dlfilter", "x.so"}, true), "-");
  EXPECT_EQ(TraceInputFromArgv({"perf", "script", "-i", "-"}, false), "-");
  // Options before the subcommand, and --inline (not --input), are not inputs.
  EXPECT_EQ(TraceInputFromArgv({"perf", "-i", "x", "script", "--inline"}, false), "perf.data");
  EXPECT_EQ(TraceInputFromArgv({"perf", "script", "--", "-i", "x"}, false), "perf.data");
}

TEST(PerfCommandLineTest, OwnCommandLineHasThisProgram) {
  auto argv = ReadOwnCommandLine();
  ASSERT_TRUE(argv.ok()) << argv.status();
  ASSERT_FALSE(argv->empty());
  EXPECT_THAT((*argv)[0], ::testing::HasSubstr("plugin_unit_test"));
}

TEST(PerfCommandLineTest, PipesCannotBeReread) {
  EXPECT_FALSE(CheckRereadable("-").ok());
  EXPECT_THAT(std::string(CheckRereadable("-").message()), ::testing::HasSubstr("trace=FILE"));
  std::string fifo = ::testing::TempDir() + "/plugin_fifo_test";
  unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_FALSE(CheckRereadable(fifo).ok());
  unlink(fifo.c_str());
  EXPECT_TRUE(CheckRereadable(PAGEBLAME_SOURCE_DIR "/traces/rules-trace.data").ok());
}

// perf's own options say where the binaries are: the plugin reads the same.
TEST(PerfCommandLineTest, SymbolPathsAsPerfTakesThem) {
  PerfSymbolPaths p = SymbolPathsFromArgv(
      {"perf", "--buildid-dir", "/cache", "script", "--symfs=/root", "-i", "t.data"}, nullptr);
  EXPECT_EQ(p.buildid_dir, "/cache");
  EXPECT_EQ(p.symfs, "/root");
  p = SymbolPathsFromArgv({"perf", "--buildid-dir=/c2", "script", "--symfs", "/r2"}, "/env");
  EXPECT_EQ(p.buildid_dir, "/c2");
  EXPECT_EQ(p.symfs, "/r2");
  // $PERF_BUILDID_DIR when the option is not given; none: perf's default.
  EXPECT_EQ(SymbolPathsFromArgv({"perf", "script"}, "/env").buildid_dir, "/env");
  p = SymbolPathsFromArgv({"perf", "script", "-i", "t.data"}, nullptr);
  EXPECT_EQ(p.buildid_dir, "");
  EXPECT_EQ(p.symfs, "");
  // --buildid-dir is perf's global option only; --symfs is script's only.
  p = SymbolPathsFromArgv({"perf", "--symfs", "/x", "script", "--buildid-dir", "/y"}, nullptr);
  EXPECT_EQ(p.buildid_dir, "");
  EXPECT_EQ(p.symfs, "");
}

// perf script -f also makes perf read another user's /tmp/perf-PID.map:
// the plugin's own symbols follow it.
TEST(PerfCommandLineTest, ForceAsPerfScriptTakesIt) {
  EXPECT_TRUE(ForceFromArgv({"perf", "script", "-f", "-i", "t.data"}));
  EXPECT_TRUE(ForceFromArgv({"perf", "script", "-i", "t.data", "--force"}));
  EXPECT_FALSE(ForceFromArgv({"perf", "script", "-i", "t.data"}));
  EXPECT_FALSE(ForceFromArgv({"perf", "script", "-f", "--no-force"}));
  // Before "script", after "--": not perf script's -f.
  EXPECT_FALSE(ForceFromArgv({"perf", "-f", "script"}));
  EXPECT_FALSE(ForceFromArgv({"perf", "script", "--", "-f"}));
}

}  // namespace
}  // namespace pageblame::plugin

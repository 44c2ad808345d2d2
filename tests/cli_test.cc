// The pageblame binary as users run it: bad input gets one line that says
// what is wrong and what to do, and a non-zero exit, never a crash; good
// input gives the contract's JSON.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/perf/compressed_test_util.h"
#include "tests/cli_runner.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

using ::testing::HasSubstr;

std::string Truncated(double fraction) {
  std::ifstream in(TracePath("rules-trace.data"), std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(in)), {});
  std::string path = ScratchPath("truncated-" + std::to_string(int(fraction * 1000)) + ".data");
  std::ofstream(path, std::ios::binary).write(data.data(), size_t(data.size() * fraction));
  return path;
}

TEST(CliTest, MissingFile) {
  ExpectOneLineError(Pageblame("maps -i /nonexistent/trace.data"), "/nonexistent/trace.data");
}

TEST(CliTest, NotAPerfFile) {
  ExpectOneLineError(Pageblame("maps -i " + TracePath("manifest.tsv")), "perf");
}

TEST(CliTest, TruncatedFileAtManyPoints) {
  for (double f : {0.001, 0.01, 0.05, 0.3, 0.6, 0.95, 0.999}) {
    SCOPED_TRACE(f);
    ExpectOneLineError(Pageblame("maps -i " + Truncated(f)), "truncated");
  }
}

TEST(CliTest, TraceWithoutSyscallEventsSaysWhatToRecord) {
  CliRun r = Pageblame("maps -i " + TracePath("no-syscalls.data"));
  ExpectOneLineError(r, "no memory syscall events");
  EXPECT_THAT(r.err, HasSubstr("perf trace record --call-graph fp"));
}

TEST(CliTest, TraceWithoutCallChainsSaysWhatToRecord) {
  CliRun r = Pageblame("query -i " + TracePath("no-callchain.data") + " 0x1000");
  // This fixture has mmap events only, without -g: both problems are real;
  // either way the message must say how to record.
  EXPECT_FALSE(r.crashed);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("perf trace record --call-graph fp"));
}

TEST(CliTest, CallChainsOnTheEntersAloneAreEnough) {
  // rules-enter-fp.data: bin/rules recorded with -e 'syscalls:sys_enter_X/call-graph=fp/'
  // -e 'syscalls:sys_exit_X/call-graph=no/' (the form the design recommends for
  // DWARF stacks, with fp to keep it small): a call's stack comes from its enter.
  CliRun r = Pageblame("maps --json -i " + TracePath("rules-enter-fp.data") + " --buildid-dir " +
                       SourceDir() + "/traces/buildid-cache");
  EXPECT_FALSE(r.crashed);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"do_mmap_anon\""));
}

TEST(CliTest, BadArguments) {
  CliRun r = Pageblame("query -i " + TracePath("rules-trace.data") + " not-an-address");
  ExpectOneLineError(r, "not-an-address");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(Pageblame("maps --bogus").exit_code, 2);
  EXPECT_EQ(Pageblame("maps -i " + TracePath("rules-trace.data") + " --at yesterday").exit_code, 2);
  EXPECT_EQ(Pageblame("frobnicate").exit_code, 2);
}

TEST(CliTest, AFailedWriteIsAnErrorNotATruncatedAnswer) {
  // /dev/full: every write fails with ENOSPC, as on a full disk.
  for (const char* format : {"--json", ""}) {
    SCOPED_TRACE(format);
    CliRun r = Pageblame(std::string("maps -i ") + TracePath("rules-trace.data") + " " + format +
                         " >/dev/full");
    ExpectOneLineError(r, "writing the output failed");
  }
}

TEST(CliTest, MapsJsonFollowsTheContract) {
  CliRun r = Pageblame("maps --json -i " + TracePath("rules-record.data"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_array());
  ASSERT_GT(j.size(), 50u);
  uint64_t last_pid = 0, last_start = 0;
  int with_origin = 0;
  for (const auto& row : j) {
    for (const char* k : {"pid", "start", "end", "prot", "path", "origin"}) {
      ASSERT_TRUE(row.contains(k)) << k << " missing in " << row.dump();
    }
    uint64_t pid = row["pid"], start = std::stoull(row["start"].get<std::string>(), nullptr, 16);
    EXPECT_TRUE(pid > last_pid || (pid == last_pid && start > last_start)) << "not sorted by pid, start";
    last_pid = pid;
    last_start = start;
    if (!row["origin"].is_null()) {
      ++with_origin;
      for (const char* k : {"syscall", "time", "pid", "tid", "comm", "stack"}) {
        ASSERT_TRUE(row["origin"].contains(k)) << k;
      }
    }
  }
  EXPECT_GT(with_origin, 50);
}

TEST(CliTest, CompressedTracesAnswerLikeTheirDecompressedCopies) {
  // perf record -z traces, read directly, against the same data with every
  // COMPRESSED record replaced by its records (decompressed by the test with
  // libzstd alone, perf/compressed_test_util.h).
  for (const std::string name : {"rules-zstd.data", "rules-zstd-pipe.data",
                                 "rules-dwarf-zstd.data"}) {
    SCOPED_TRACE(name);
    std::string plain = ScratchPath(name + ".decompressed");
    std::ofstream(plain, std::ios::binary)
        << perf::testing::DecompressedCopy(perf::testing::ReadBytes(TracePath(name)));
    CliRun packed = Pageblame("maps --json -i " + TracePath(name));
    CliRun unpacked = Pageblame("maps --json -i " + plain);
    ASSERT_EQ(packed.exit_code, 0) << packed.err;
    ASSERT_EQ(unpacked.exit_code, 0) << unpacked.err;
    EXPECT_GT(nlohmann::json::parse(packed.out).size(), 20u);
    EXPECT_EQ(packed.out, unpacked.out);
  }
}

TEST(CliTest, PerfInjectCopyOfACompressedTraceAnswersTheSame) {
  // What the old refusal told users to do. perf 6.1's inject writes
  // COMPRESSED records again rather than their records (builtin-inject.c
  // repipes them), so here it checks that perf's rewrite of the file reads
  // the same. (From a pipe-mode input, perf 6.1's inject writes a cut file,
  // and exits 0: not tried.)
  if (std::system("perf version >/dev/null 2>&1") != 0) GTEST_SKIP() << "no perf";
  for (const std::string name : {"rules-zstd.data"}) {
    SCOPED_TRACE(name);
    std::string out = ScratchPath(name + ".injected");
    ASSERT_EQ(std::system(("perf inject -i " + TracePath(name) + " -o " + out +
                           " >/dev/null 2>&1").c_str()),
              0);
    CliRun direct = Pageblame("maps --json -i " + TracePath(name));
    CliRun injected = Pageblame("maps --json -i " + out);
    ASSERT_EQ(direct.exit_code, 0) << direct.err;
    ASSERT_EQ(injected.exit_code, 0) << injected.err;
    EXPECT_EQ(direct.out, injected.out);
  }
}

TEST(CliTest, MapsJsonIsLaidOutAsEveryOtherJsonAnswer) {
  // maps --json writes its text directly (for speed), the other answers dump
  // a DOM: the bytes must be what dump(1) of the same document prints, on a
  // native trace and a JIT one (perf map symbol names, anonymous code).
  for (const char* trace : {"rules-record.data", "node-trace.data"}) {
    CliRun r = Pageblame(std::string("maps --json -i ") + TracePath(trace));
    ASSERT_EQ(r.exit_code, 0) << trace << ": " << r.err;
    const auto doc = nlohmann::ordered_json::parse(r.out);
    EXPECT_GT(doc.size(), 10u) << trace;
    EXPECT_EQ(r.out, doc.dump(1) + "\n") << trace;
  }
}

TEST(CliTest, QueryAtATimeBeforeAMunmapStillFindsThePage) {
  // Take a munmap from the history of a page that is gone at the end, and ask
  // about that page just before and at the munmap's time.
  CliRun maps = Pageblame("maps --json -i " + TracePath("rules-record.data"));
  ASSERT_EQ(maps.exit_code, 0);
  nlohmann::json rows = nlohmann::json::parse(maps.out);
  std::string addr, pid;
  for (const auto& row : rows) {
    if (!row["origin"].is_null()) {
      addr = row["start"];
      pid = std::to_string(row["pid"].get<int>());
      break;
    }
  }
  ASSERT_FALSE(addr.empty());
  CliRun q = Pageblame("query --json --pid " + pid + " -i " + TracePath("rules-record.data") + " " + addr);
  ASSERT_EQ(q.exit_code, 0) << q.err;
  nlohmann::json a = nlohmann::json::parse(q.out);
  ASSERT_EQ(a.size(), 1u);
  double created = a[0]["origin"]["time"];
  // Just before its creation the page was not (yet) this region.
  char before[64];
  snprintf(before, sizeof before, "%.6f", created - 0.000001);
  CliRun q0 = Pageblame("query --json --pid " + pid + " --at " + before + " -i " +
                     TracePath("rules-record.data") + " " + addr);
  nlohmann::json a0 = nlohmann::json::parse(q0.out);
  ASSERT_EQ(a0.size(), 1u);
  EXPECT_TRUE(a0[0]["origin"].is_null() || a0[0]["origin"]["time"] != created);
}

TEST(CliTest, BuildIdCacheFindsTheProgramWhenItsRecordedPathDoesNot) {
  // --symfs to an empty directory hides every recorded path (perf's meaning);
  // the shipped build-id cache must still find traces/bin/rules by build id.
  std::string empty = ScratchPath("empty-symfs");
  mkdir(empty.c_str(), 0755);
  std::string common = " --json -i " + TracePath("rules-trace.data") + " --symfs " + empty;
  CliRun without = Pageblame("maps" + common + " --buildid-dir " + empty);  // not ~/.debug
  CliRun with = Pageblame("maps" + common + " --buildid-dir " + SourceDir() + "/traces/buildid-cache");
  ASSERT_EQ(without.exit_code, 0) << without.err;
  ASSERT_EQ(with.exit_code, 0) << with.err;
  auto count_program_symbols = [](const std::string& out) {
    int n = 0;
    for (const auto& row : nlohmann::json::parse(out)) {
      if (row["origin"].is_null()) continue;
      for (const auto& f : row["origin"]["stack"]) {
        n += f["symbol"].is_string() && f["symbol"] == "main";
      }
    }
    return n;
  };
  EXPECT_EQ(count_program_symbols(without.out), 0);
  EXPECT_GT(count_program_symbols(with.out), 20);
}

// The numbers of -v's "symbols:" line, by the word after each ("resolved",
// "found" for the DSOs not found, ...), and the DSOs it names.
struct SymbolLine {
  std::map<std::string, uint64_t> n;
  std::string named;  // after "not found: "
  bool present = false;
};
SymbolLine ParseSymbolLine(const std::string& err) {
  SymbolLine r;
  const std::string tag = "pageblame: symbols: ";
  size_t at = err.find(tag);
  if (at == std::string::npos) return r;
  r.present = true;
  std::string line = err.substr(at + tag.size(), err.find('\n', at) - at - tag.size());
  if (size_t colon = line.find("not found: "); colon != std::string::npos) {
    r.named = line.substr(colon + 11);
    line = line.substr(0, colon + 9);
  }
  std::vector<std::string> words = absl::StrSplit(line, absl::ByAnyChar(" ,;()"), absl::SkipEmpty());
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    uint64_t v;
    if (absl::SimpleAtoi(words[i], &v)) r.n[words[i + 1]] = v;
  }
  return r;
}

TEST(CliTest, VerboseSaysWhatSymbolizationFoundAfterTheAnswer) {
  std::string empty = ScratchPath("empty-symfs-v");
  mkdir(empty.c_str(), 0755);
  const std::string trace = " --json -i " + TracePath("rules-trace.data");
  CliRun found = Pageblame("maps -v" + trace);
  CliRun hidden = Pageblame("maps -v" + trace + " --symfs " + empty + " --buildid-dir " + empty);
  CliRun quiet = Pageblame("maps" + trace + " --symfs " + empty + " --buildid-dir " + empty);
  ASSERT_EQ(found.exit_code, 0) << found.err;
  ASSERT_EQ(hidden.exit_code, 0) << hidden.err;
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(found.out, Pageblame("maps" + trace).out);  // -v changes stderr only

  SymbolLine f = ParseSymbolLine(found.err), h = ParseSymbolLine(hidden.err);
  ASSERT_TRUE(f.present) << found.err;
  ASSERT_TRUE(h.present) << hidden.err;
  EXPECT_FALSE(ParseSymbolLine(quiet.err).present) << quiet.err;
  // Printed last: the frames were symbolized while the answer was written.
  EXPECT_EQ(found.err.rfind("pageblame: symbols: "), found.err.rfind("\n", found.err.size() - 2) + 1);
  // Every frame of the answer was looked up; the program's own are resolved
  // from its recorded path, and nothing is missing.
  EXPECT_GT(f.n["frames"], 0u);
  EXPECT_LE(f.n["resolved"], f.n["frames"]);
  EXPECT_GT(f.n["resolved"], 0u);
  EXPECT_GT(f.n["ELF"], 0u);
  EXPECT_EQ(f.n["DSOs"], 0u);
  EXPECT_TRUE(f.named.empty()) << f.named;
  // With every path hidden the same frames are looked up, fewer resolve,
  // and the line names the program's recorded path among the DSOs not found.
  EXPECT_EQ(h.n["frames"], f.n["frames"]);
  EXPECT_LT(h.n["resolved"], f.n["resolved"]);
  EXPECT_GT(h.n["DSOs"], 0u);
  EXPECT_THAT(h.named, HasSubstr("/traces/bin/rules")) << hidden.err;
}

}  // namespace
}  // namespace pageblame::testing

// `pageblame dotnet-regions` as a user runs it, on a real .NET process:
// traces/src/dotnet-leak (native leaks beside live managed arrays) runs until
// it says READY; then
//   pageblame dotnet-regions -p PID -o live.txt
//   createdump -f app.core PID; pageblame dotnet-regions app.core -o core.txt
// and the tables are checked against what the kernel says of the process
// (/proc/PID/maps read right after, the core's own segments) and against
// the app's truth file (which method got which addresses). Then a process
// and a dump without .NET (dotnet_regions_cli_test.cc: the rest of the bad
// input). Skipped (with the reason) without dotnet, a .NET 10 SDK, the
// helper (the build makes it when a .NET 10 SDK is installed) or root (the helper attaches with ptrace).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/regions/region_table_reader.h"
#include "tests/cli_runner.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;
using regions::Region;
using regions::RegionTable;
constexpr uint64_t kPage = 4096;

std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string HelperPath() { return std::string(PAGEBLAME_BINARY_DIR) + "/lib/dotnet-regions/dotnet-regions.dll"; }

// Why this machine cannot run the live part, or "".
std::string SkipReason() {
  if (geteuid() != 0) return "not root (the helper attaches to the process with ptrace)";
  if (Shell("command -v dotnet").exit_code != 0) return "dotnet is not installed";
  if (Shell("dotnet --list-sdks | grep -q '^10\\.'").exit_code != 0) return "no .NET 10 SDK";
  if (access(HelperPath().c_str(), R_OK) != 0) return "the helper is not built (cmake --build builds it when a .NET 10 SDK is installed)";
  return "";
}

struct TruthRange {
  std::string method, what;
  uint64_t start, end;
};

// The app's run, once for all tests: its pid, the tables, the maps.
struct LiveRun {
  std::string skip, work, pid, maps, live_table, core, core_table, runtime_dir;
  CliRun live, from_core;
  std::vector<TruthRange> truth;
};

std::vector<TruthRange> ReadTruth(const std::string& path) {
  std::vector<TruthRange> out;
  for (absl::string_view line : absl::StrSplit(Slurp(path), '\n')) {
    std::vector<std::string> c = absl::StrSplit(line, '\t');
    if (line.empty() || line[0] == '#' || c.size() < 5 || c[0] == "method") continue;
    out.push_back({c[0], c[1], std::stoull(c[2], nullptr, 16), std::stoull(c[3], nullptr, 16)});
  }
  return out;
}

// Builds the app into the build tree, starts it, waits for READY (pid in
// WORK/app.ready), runs the command on the pid and on a core, releases it.
LiveRun RunTheApp() {
  LiveRun r;
  r.skip = SkipReason();
  if (!r.skip.empty()) return r;
  r.work = ScratchPath("dotnet-regions");
  // Built from a copy, outside the source tree: an in-source obj/ left by
  // another build (traces/record-dotnet.sh) would be compiled in.
  const std::string app = std::string(PAGEBLAME_BINARY_DIR) + "/tests/dotnet-leak";
  CliRun build = Shell(absl::StrCat("mkdir -p ", r.work, " ", app, "-src && cd ", SourceDir(),
                                    "/traces/src/dotnet-leak && cp -p Program.cs dotnet-leak.csproj leaknative.c ", app,
                                    "-src/ && cd ", app, "-src && DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 "
                                    "timeout 300 dotnet build -c Release --nologo -v q -nodeReuse:false "
                                    "-p:UseSharedCompilation=false -o ", app));
  EXPECT_EQ(build.exit_code, 0) << build.out << build.err;
  const pid_t child = fork();
  if (child == 0) {
    const std::string log = r.work + "/app.log";
    freopen(log.c_str(), "w", stdout);
    execlp("timeout", "timeout", "300", "dotnet", (app + "/dotnet-leak.dll").c_str(), r.work.c_str(), "app",
           static_cast<char*>(nullptr));
    _exit(127);
  }
  for (int i = 0; i < 600 && r.pid.empty(); ++i) {
    std::string ready = Slurp(r.work + "/app.ready");
    if (!ready.empty() && ready.back() == '\n') r.pid = ready.substr(0, ready.size() - 1);
    if (r.pid.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_FALSE(r.pid.empty()) << "the app did not get ready: " << Slurp(r.work + "/app.log");
  if (!r.pid.empty()) {
    r.live_table = r.work + "/live.txt";
    r.live = Pageblame(absl::StrCat("dotnet-regions -p ", r.pid, " -o ", r.live_table));
    r.maps = r.work + "/maps";
    Shell(absl::StrCat("cp /proc/", r.pid, "/maps ", r.maps));
    r.truth = ReadTruth(r.work + "/app.truth.tsv");
    // createdump sits beside the runtime the app loaded.
    CliRun dir = Shell(absl::StrCat("grep -m1 -o '/[^ ]*/libcoreclr.so' ", r.maps, " | xargs dirname"));
    r.runtime_dir = std::string(absl::StripTrailingAsciiWhitespace(dir.out));
    r.core = r.work + "/app.core";
    CliRun dump = Shell(absl::StrCat("timeout 120 ", r.runtime_dir, "/createdump -f ", r.core, " ", r.pid));
    EXPECT_EQ(dump.exit_code, 0) << dump.out << dump.err;
    r.core_table = r.work + "/core.txt";
    r.from_core = Pageblame(absl::StrCat("dotnet-regions ", r.core, " -o ", r.core_table));
  }
  Shell(absl::StrCat("touch ", r.work, "/app.release"));
  int status = 0;
  waitpid(child, &status, 0);
  return r;
}

RegionTable ReadTable(const std::string& path) {
  absl::StatusOr<RegionTable> t = regions::RegionTableReader::DetectAndParse(path);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : RegionTable();
}

// "Image [PATH]" -> PATH; "" for other kinds.
std::string ImageOf(const Region& r) {
  if (!absl::StartsWith(r.usage, "Image [")) return "";
  return r.usage.substr(7, r.usage.size() - 8);
}

PageSet Pages(uint64_t start, uint64_t end) {
  PageSet p;
  p.Add(start & ~(kPage - 1), (end + kPage - 1) & ~(kPage - 1));
  return p;
}

PageSet TablePages(const RegionTable& t, absl::string_view usage_prefix = "") {
  PageSet p;
  for (const Region& r : t.regions)
    if (absl::StartsWith(r.usage, usage_prefix)) p.Add(r.start, r.end);
  return p;
}

bool IsNative(const TruthRange& t) {
  return t.method != "GrowManagedHeap" && !absl::StrContains(t.what, "reserved part");
}

// Every row inside a mapping of that moment; an Image row only in its own
// .dll's (or .so's) mappings; the GC's committed parts readable and writable.
void CheckLiveRows(const LiveRun& r) {
  ASSERT_EQ(r.live.exit_code, 0) << r.live.err;
  EXPECT_THAT(r.live.err, HasSubstr("pageblame dotnet-regions: "));
  const RegionTable table = ReadTable(r.live_table), maps = ReadTable(r.maps);
  EXPECT_EQ(table.format, "sos-maddress");
  EXPECT_EQ(table.skipped, 0);
  ASSERT_GT(table.regions.size(), 50u);
  int images = 0, gc = 0;
  for (const Region& row : table.regions) {
    uint64_t inside = 0;
    for (const Region& m : maps.regions) {
      if (m.end <= row.start || m.start >= row.end) continue;
      inside += std::min(m.end, row.end) - std::max(m.start, row.start);
      if (!ImageOf(row).empty()) {
        EXPECT_EQ(m.usage, ImageOf(row)) << row.usage << " at line " << row.line;
      }
      if (absl::StartsWith(row.usage, "GCHeap") && row.state == "MEM_COMMIT") {
        EXPECT_EQ(m.protect.substr(0, 2), "rw") << "line " << row.line;
      }
    }
    EXPECT_EQ(inside, row.size()) << "line " << row.line << ": " << row.usage << " outside the mappings";
    images += !ImageOf(row).empty();
    gc += absl::StartsWith(row.usage, "GCHeap ") || row.usage == "GCHeap";
  }
  EXPECT_GT(images, 20);
  EXPECT_GT(gc, 10);
  EXPECT_GT(TablePages(table, "GCHeap").Bytes(), 80u << 20);  // GrowManagedHeap's 80 MiB live
}

// The runtime's table claims the GC's memory and none of the app's native
// memory, not even the 4 MiB malloc blocks glibc maps next to a .dll; the
// diff against the process's maps leaves exactly the native leaks.
void CheckDiff(const LiveRun& r) {
  ASSERT_EQ(r.live.exit_code, 0) << r.live.err;
  const PageSet claimed = TablePages(ReadTable(r.live_table));
  CliRun diff = Pageblame(absl::StrCat("diff --json ", r.maps, " ", r.live_table));
  ASSERT_EQ(diff.exit_code, 0) << diff.err;
  PageSet unaccounted;
  const Json answer = Json::parse(diff.out);  // kept: the loop below refers into it
  for (const Json& p : answer["unaccounted"]["pieces"]) {
    unaccounted.Add(std::stoull(p["start"].get<std::string>(), nullptr, 16),
                    std::stoull(p["end"].get<std::string>(), nullptr, 16));
  }
  uint64_t native = 0, managed = 0;
  ASSERT_FALSE(r.truth.empty());
  for (const TruthRange& t : r.truth) {
    const PageSet pages = Pages(t.start, t.end);
    if (IsNative(t)) {
      native += pages.Bytes();
      EXPECT_TRUE(pages.Intersect(claimed).empty()) << t.method << " " << t.what << ": claimed by the runtime table";
      EXPECT_TRUE(pages.Minus(unaccounted).empty()) << t.method << " " << t.what << ": not unaccounted";
    } else if (t.method == "GrowManagedHeap") {
      managed += pages.Bytes();
      EXPECT_TRUE(pages.Minus(claimed).empty()) << t.what << ": GC memory the table misses";
      EXPECT_TRUE(pages.Intersect(unaccounted).empty()) << t.what;
    }
  }
  EXPECT_GT(native, 90u << 20);
  EXPECT_GT(managed, 70u << 20);
}

// From the core: the same runtime, every committed row in the core's own
// segments, Image rows in their files' NT_FILE ranges.
void CheckCore(const LiveRun& r) {
  ASSERT_EQ(r.from_core.exit_code, 0) << r.from_core.err;
  const RegionTable table = ReadTable(r.core_table), core = ReadTable(r.core);
  EXPECT_EQ(core.format, "elf-core");
  for (const Region& row : table.regions) {
    uint64_t inside = 0;
    for (const Region& c : core.regions) {
      if (c.end <= row.start || c.start >= row.end) continue;
      inside += std::min(c.end, row.end) - std::max(c.start, row.start);
      if (!ImageOf(row).empty()) {
        EXPECT_EQ(c.usage, ImageOf(row)) << "line " << row.line;
      }
    }
    if (row.state == "MEM_COMMIT") {
      EXPECT_EQ(inside, row.size()) << "line " << row.line << ": " << row.usage;
    }
  }
  // The dump changes the GC heap by nothing: the same committed bytes.
  const RegionTable live = ReadTable(r.live_table);
  EXPECT_EQ(TablePages(table, "GCHeap").Intersect(TablePages(live, "GCHeap")).Bytes(),
            TablePages(live, "GCHeap").Bytes());
  CliRun diff = Pageblame(absl::StrCat("diff --json ", r.core, " ", r.core_table));
  ASSERT_EQ(diff.exit_code, 0) << diff.err;
  EXPECT_EQ(Json::parse(diff.out)["runtime_only"]["bytes"].get<uint64_t>(), 0u);
}

// One test: each test runs in its own process (gtest_discover_tests), and
// the app is built and run once.
TEST(DotnetRegionsLiveTest, ProcessAndItsCore) {
  const LiveRun r = RunTheApp();
  if (!r.skip.empty()) GTEST_SKIP() << r.skip;
  ASSERT_FALSE(r.pid.empty());
  std::printf("pid %s:\n%sits core:\n%s", r.pid.c_str(), r.live.err.c_str(), r.from_core.err.c_str());
  {
    SCOPED_TRACE("rows of the live table against /proc/PID/maps");
    CheckLiveRows(r);
  }
  {
    SCOPED_TRACE("diff of the maps against the live table, with the truth file");
    CheckDiff(r);
  }
  {
    SCOPED_TRACE("the table from the core");
    CheckCore(r);
  }
}

TEST(DotnetRegionsLiveTest, AProcessWithoutDotnetIsRefused) {
  if (!SkipReason().empty()) GTEST_SKIP() << SkipReason();
  CliRun r = Shell(absl::StrCat("sleep 30 & p=$!; ", PAGEBLAME_BINARY_DIR,
                                "/bin/pageblame dotnet-regions -p $p; rc=$?; kill $p; exit $rc"));
  EXPECT_EQ(r.exit_code, 1);
  ExpectOneLineError(r, "no .NET runtime in this process");
}

// A full core of a process without .NET (`sleep`), from the runtime's own
// createdump; "" if it cannot be made.
std::string CoreWithoutDotnet() {
  const std::string core = ScratchPath("sleep.core");
  CliRun r = Shell(absl::StrCat(
      "c=$(dotnet --list-runtimes | awk '/^Microsoft.NETCore.App / {gsub(/[][]/, \"\", $3); print $3 \"/\" $2 "
      "\"/createdump\"}' | tail -1); sleep 30 & p=$!; timeout 60 \"$c\" --full -f ", core, " $p; rc=$?; kill $p; exit $rc"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  return r.exit_code == 0 ? core : "";
}

TEST(DotnetRegionsLiveTest, ADumpWithoutDotnetIsRefused) {
  if (!SkipReason().empty()) GTEST_SKIP() << SkipReason();
  const std::string core = CoreWithoutDotnet();
  ASSERT_FALSE(core.empty());
  CliRun r = Pageblame("dotnet-regions " + core);
  EXPECT_EQ(r.exit_code, 1);
  ExpectOneLineError(r, "no .NET runtime in this dump");
}

// What to do when the helper is not built, or dotnet is not in PATH.
TEST(DotnetRegionsLiveTest, NoHelperOrNoDotnetSaysWhatToDo) {
  if (!SkipReason().empty()) GTEST_SKIP() << SkipReason();
  const std::string core = CoreWithoutDotnet();
  ASSERT_FALSE(core.empty());
  CliRun r = Shell(absl::StrCat("PAGEBLAME_DOTNET_REGIONS_HELPER=/nonexistent/dotnet-regions.dll ",
                                PAGEBLAME_BINARY_DIR, "/bin/pageblame dotnet-regions ", core));
  EXPECT_EQ(r.exit_code, 1);
  ExpectOneLineError(r, "PAGEBLAME_DOTNET_REGIONS_HELPER names /nonexistent/dotnet-regions.dll");
  // A copy of pageblame with no helper beside it.
  const std::string lone = ScratchPath("lone");
  Shell(absl::StrCat("mkdir -p ", lone, "/bin && cp ", PAGEBLAME_BINARY_DIR, "/bin/pageblame ", lone, "/bin/"));
  r = Shell(absl::StrCat(lone, "/bin/pageblame dotnet-regions ", core));
  EXPECT_EQ(r.exit_code, 1);
  ExpectOneLineError(r, "the ClrMD helper is not built");
  EXPECT_THAT(r.err, HasSubstr("build pageblame again"));
  EXPECT_THAT(r.err, HasSubstr("eeheap"));
  r = Shell(absl::StrCat("PATH=/nonexistent ", PAGEBLAME_BINARY_DIR, "/bin/pageblame dotnet-regions ", core));
  EXPECT_EQ(r.exit_code, 1);
  ExpectOneLineError(r, "dotnet is not in PATH");
}

}  // namespace
}  // namespace pageblame::testing

// The .NET hunt as a user runs it, on a real .NET 10 process: traces/dotnet/
// (recorded by traces/record-dotnet.sh: the app traces/src/dotnet-leak under
// `perf record --call-graph dwarf`, its core dump from `dotnet-dump collect`
// taken when it said READY, the runtime's own table from that dump, and the
// truth file the app wrote: which C# method got which addresses).
//
//   pageblame diff CORE RUNTIME_TABLE
//   pageblame attribute -i TRACE --address CORE --maddress RUNTIME_TABLE --by commit
//
// PAGEBLAME_DOTNET_DIR points the same checks at another recording
// (tests/dotnet_hunt.sh records one live and runs this test on it).
#include <dirent.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/format.h"
#include "processor/regions/region_table_reader.h"
#include "tests/cli_runner.h"
#include "tests/dotnet_truth.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;
constexpr uint64_t kPage = 4096;

std::string DataDir() {
  const char* env = std::getenv("PAGEBLAME_DOTNET_DIR");
  return env && *env ? env : TracePath("dotnet");
}

// The one file in DataDir() named PREFIX*SUFFIX, or "".
std::string FindFile(const std::string& prefix, const std::string& suffix) {
  std::string found;
  DIR* d = opendir(DataDir().c_str());
  if (!d) return "";
  while (dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (absl::StartsWith(n, prefix) && absl::EndsWith(n, suffix)) found = DataDir() + "/" + n;
  }
  closedir(d);
  return found;
}

// The recording: the dwarf trace, the pid the app ran as, its truth file,
// the core dump (decompressed once) and the runtime's table.
struct Hunt {
  std::string trace, pid, core, runtime_table, truth_ranges;
  std::vector<TruthRange> truth;
};

const Hunt& TheHunt() {
  static const Hunt h = [] {
    Hunt h;
    h.trace = DataDir() + "/dotnet-leak.data";
    const std::string truth = FindFile("dotnet-leak.", ".truth.tsv");
    const std::string name = truth.substr(DataDir().size() + 1);
    h.pid = name.substr(std::string("dotnet-leak.").size(),
                        name.size() - std::string("dotnet-leak..truth.tsv").size());
    h.truth = ReadDotnetTruth(truth);
    h.truth_ranges = FindFile("dotnet-leak." + h.pid, ".truth.ranges");
    // `pageblame dotnet-regions` of the dump (a live recording); the bundled
    // recording has the range list of the ClrMD tool that came before it.
    h.runtime_table = FindFile("dotnet-leak." + h.pid, ".dotnet-regions.txt");
    if (h.runtime_table.empty()) h.runtime_table = FindFile("dotnet-leak." + h.pid, ".clr-regions.txt");
    h.core = ScratchPath("dotnet-leak." + h.pid + ".core");
    const std::string xz = FindFile("dotnet-leak." + h.pid, ".core.trim.xz");
    CliRun unxz = Shell("xz -dc '" + xz + "' > '" + h.core + "'");
    EXPECT_EQ(unxz.exit_code, 0) << unxz.err;
    return h;
  }();
  return h;
}

uint64_t Hex(const Json& j) { return std::stoull(j.get<std::string>(), nullptr, 16); }

PageSet PagesOf(const TruthRange& t) {
  PageSet p;
  p.Add(t.start & ~(kPage - 1), (t.end + kPage - 1) & ~(kPage - 1));
  return p;
}

// Whether a call's stack (JSON, leaf first) has a frame naming `method`.
bool StackNames(const Json& call, const std::string& method) {
  if (!call.is_object() || !call.contains("stack")) return false;
  for (const Json& f : call["stack"]) {
    if (f["symbol"].is_string() && absl::StrContains(f["symbol"].get<std::string>(), method)) return true;
  }
  return false;
}

std::string Describe(const Json& call) {
  std::string s = call["syscall"].get<std::string>() + ":";
  for (const Json& f : call["stack"]) {
    s += " " + (f["symbol"].is_string() ? f["symbol"].get<std::string>() : f["ip"].get<std::string>());
    if (s.size() > 600) break;
  }
  return s;
}

const std::string kSymbols() { return " --perf-map-dir " + DataDir(); }

// The pages the runtime table's Image rows claim. The bundled table (the
// ClrMD range list that came before `pageblame dotnet-regions`) sizes a
// module by its PE image, but .NET maps a framework .dll flat (its file
// size, `r--s`): such a row can run past the mapping into whatever glibc
// placed next, e.g. a 4 MiB malloc (seen live: System.Memory.dll's row
// covered 300 KiB of NativeMemory.Alloc's block). `pageblame dotnet-regions`
// cuts Image rows to the image's own mappings: there these pages must be
// none of the app's.
PageSet ImagePages(const std::string& table) {
  PageSet out;
  absl::StatusOr<regions::RegionTable> t = regions::RegionTableReader::DetectAndParse(table);
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return out;
  std::ifstream in(table);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  for (const regions::Region& r : t->regions) {
    const bool image = t->format == "ranges"
                           ? r.line <= static_cast<int>(lines.size()) && absl::StrContains(lines[r.line - 1], "# Image")
                           : absl::StartsWith(r.usage, "Image");
    if (image) out.Add(r.start & ~(kPage - 1), (r.end + kPage - 1) & ~(kPage - 1));
  }
  return out;
}

bool ImagesClipped(const std::string& table) { return absl::EndsWith(table, ".dotnet-regions.txt"); }

TEST(DotnetHuntTest, TheDiffLeavesTheAppsNativeMemoryAndAccountsTheGcs) {
  const Hunt& h = TheHunt();
  ASSERT_FALSE(h.runtime_table.empty()) << "no runtime table in " << DataDir();
  CliRun diff = Pageblame("diff --json " + h.core + " " + h.runtime_table);
  ASSERT_EQ(diff.exit_code, 0) << diff.err;
  PageSet unaccounted;
  const Json answer = Json::parse(diff.out);
  for (const Json& p : answer["unaccounted"]["pieces"]) {
    unaccounted.Add(Hex(p["start"]) & ~(kPage - 1), (Hex(p["end"]) + kPage - 1) & ~(kPage - 1));
  }
  uint64_t native = 0, managed = 0;
  const PageSet images = ImagePages(h.runtime_table);
  for (const TruthRange& t : h.truth) {
    if (IsReservedOnly(t)) continue;  // PROT_NONE: not committed, in no diff
    const PageSet missing = PagesOf(t).Minus(unaccounted).Minus(images);
    if (IsManaged(t)) {
      managed += PagesOf(t).Bytes();
      EXPECT_TRUE(PagesOf(t).Intersect(unaccounted).empty())
          << t.method << " " << t.what << ": GC memory the runtime table accounts for is unaccounted";
    } else {
      native += PagesOf(t).Bytes();
      EXPECT_TRUE(missing.empty()) << t.method << " " << t.what << ": not unaccounted:" << missing.Describe();
    }
  }
  EXPECT_GT(native, 90u << 20);  // 32 + 18 + 16 + 24 + 8 MiB
  EXPECT_GT(managed, 70u << 20);
}

// The user's one command: the unaccounted bytes of the dump, by stack. The
// app's native memory is named by its C# methods; no managed array is there.
TEST(DotnetHuntTest, AttributeOfTheDiffNamesTheLeakingMethods) {
  const Hunt& h = TheHunt();
  CliRun run = Pageblame("attribute --json --by commit -i " + h.trace + " --pid " + h.pid + " --address " +
                         h.core + " --maddress " + h.runtime_table + kSymbols());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::map<std::string, uint64_t> truth_bytes, credited, claimed;
  const PageSet images = ImagePages(h.runtime_table);
  for (const TruthRange& t : h.truth) {
    if (!IsManaged(t) && !IsReservedOnly(t)) {
      truth_bytes[t.method] += t.end - t.start;
      claimed[t.method] += PagesOf(t).Intersect(images).Bytes();
    }
  }
  const Json answer = Json::parse(run.out);
  for (const Json& s : answer["stacks"]) {
    for (const auto& [method, bytes] : truth_bytes) {
      if (StackNames(s["commit"], method)) credited[method] += s["bytes"].get<uint64_t>();
    }
    // The GC's memory is not blamed. A stack through GrowManagedHeap is
    // right only where the runtime started a thread while the method ran
    // (the new thread's stack guard: mprotect <- setup_stack_prot <-
    // pthread_create <- ... <- GrowManagedHeap, seen live): a thread stack,
    // not the GC's.
    const Json& credited_call = s["commit"].is_null() ? s["origin"] : s["commit"];
    if (StackNames(credited_call, "GrowManagedHeap")) {
      EXPECT_TRUE(StackNames(credited_call, "pthread_create")) << Describe(credited_call);
    }
  }
  for (const auto& [method, bytes] : truth_bytes) {
    // glibc's mmap for a 4 MiB malloc is 4 MiB + a page: at least the truth.
    EXPECT_LT(claimed[method], bytes / 8) << method << ": the runtime table claims most of it";
    if (ImagesClipped(h.runtime_table)) {
      EXPECT_EQ(claimed[method], 0u) << method << ": an Image row claims it";
    }
    EXPECT_GE(credited[method], bytes - claimed[method]) << method;
    EXPECT_LE(credited[method], bytes + bytes / 8) << method;
  }
}

// The text answer by stack (--group stack) says each leaking stack in the
// app's own words: the allocator entry, then the C# methods
// (analysis/app_frames.h), not glibc's malloc internals or the framework's
// unnamed ReadyToRun code.
TEST(DotnetHuntTest, OneLineStacksNameTheCSharpMethods) {
  const Hunt& h = TheHunt();
  CliRun run = Pageblame("attribute --by commit --group stack -i " + h.trace + " --pid " + h.pid + " --address " +
                         h.core + " --maddress " + h.runtime_table + kSymbols());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("malloc <- Program::LeakNativeMemory <- Program::Main"));
  EXPECT_THAT(run.out, HasSubstr("malloc <- Program::LeakHGlobal <- Program::Main"));
  EXPECT_THAT(run.out, HasSubstr("Program::LeakMemoryMappedFile <- Program::Main"));
}

// The frames of a .NET assembly's ReadyToRun code (in JSON: how many have a
// name, how many not).
std::pair<int, int> AssemblyFramesNamed(const Json& j) {
  std::pair<int, int> n{0, 0};
  if (j.is_object()) {
    if (j.contains("ip") && j.contains("dso") && j["dso"].is_string() &&
        absl::EndsWith(j["dso"].get<std::string>(), ".dll")) {
      (j.contains("symbol") && j["symbol"].is_string() ? n.first : n.second)++;
    }
    for (const auto& [k, v] : j.items()) {
      const std::pair<int, int> m = AssemblyFramesNamed(v);
      n.first += m.first, n.second += m.second;
    }
  } else if (j.is_array()) {
    for (const Json& v : j) {
      const std::pair<int, int> m = AssemblyFramesNamed(v);
      n.first += m.first, n.second += m.second;
    }
  }
  return n;
}

// A --perf-map-dir holding the run's perf map and `jitdump` bytes as
// jit-PID.dump.
std::string MapDirWithJitdump(const Hunt& h, const std::string& name, const std::string& jitdump_cmd) {
  const std::string dir = ScratchPath(name);
  CliRun made = Shell("mkdir -p '" + dir + "' && cp '" + DataDir() + "/perf-" + h.pid + ".map' '" + dir + "/' && " +
                      jitdump_cmd + " > '" + dir + "/jit-" + h.pid + ".dump'");
  EXPECT_EQ(made.exit_code, 0) << made.err;
  return dir;
}

// The runtime's jitdump names the framework's ReadyToRun code, which runs
// from the .dll's own mapping (a PE file: no ELF symbols): every such frame
// of the hunt gets its method, and the one-line stacks start at the
// framework method the app called (NativeMemory.Alloc, MemoryMappedFile's
// CreateViewAccessor) instead of malloc. -v counts the .dll files as PE
// images, not as missing DSOs.
TEST(DotnetHuntTest, ReadyToRunFramesAreNamedFromTheJitdump) {
  const Hunt& h = TheHunt();
  const std::string xz = DataDir() + "/jit-" + h.pid + ".dump.xz";
  const std::string dir = MapDirWithJitdump(h, "jitdump-whole", "xz -dc '" + xz + "'");
  const std::string args = "attribute --by commit -i " + h.trace + " --pid " + h.pid + " --address " + h.core +
                           " --maddress " + h.runtime_table + " --perf-map-dir " + dir;
  CliRun run = Pageblame(args + " --group stack -v");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("NativeMemory::Alloc <- Program::LeakNativeMemory <- Program::Main"));
  EXPECT_THAT(run.out, HasSubstr("NativeMemory::Alloc <- Program::LeakHGlobal <- Program::Main"));
  EXPECT_THAT(run.out, HasSubstr("MemoryMappedFile::CreateViewAccessor <- Program::LeakMemoryMappedFile"));
  // A row per method (the default), on a pipe whole: the handler first,
  // then the framework call it made and the allocator that call reached.
  CliRun methods = Shell(std::string("env -u COLUMNS ") + PAGEBLAME_BINARY_DIR + "/bin/pageblame " + args);
  ASSERT_EQ(methods.exit_code, 0) << methods.err;
  EXPECT_THAT(methods.out, HasSubstr("  Program::LeakNativeMemory -> NativeMemory::Alloc -> malloc\n"));
  EXPECT_THAT(methods.out, HasSubstr("  Program::LeakHGlobal -> NativeMemory::Alloc -> malloc\n"));
  EXPECT_THAT(methods.out, HasSubstr("  Program::LeakMemoryMappedFile -> MemoryMappedFile::CreateViewAccessor -> "));
  // The full name in full stacks.
  CliRun detail = Pageblame(args + " --detail");
  EXPECT_THAT(detail.out, HasSubstr("System.Runtime.InteropServices.NativeMemory::Alloc(native uint)[PreJIT]"));
  EXPECT_THAT(run.err, HasSubstr("0 DSOs not found"));
  EXPECT_THAT(run.err, HasSubstr("PE images (.NET assemblies, no ELF: ReadyToRun code named by the jitdump): "));
  EXPECT_THAT(run.err, HasSubstr("/System.Private.CoreLib.dll"));
  CliRun json = Pageblame(args + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const std::pair<int, int> named = AssemblyFramesNamed(Json::parse(json.out));
  EXPECT_GT(named.first, 0);
  EXPECT_EQ(named.second, 0) << named.first << " .dll frames named";
  // Without the jitdump, the same frames have no name (the control).
  CliRun bare = Pageblame("attribute --json --by commit -i " + h.trace + " --pid " + h.pid + " --address " + h.core +
                          " --maddress " + h.runtime_table + kSymbols());
  ASSERT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_EQ(AssemblyFramesNamed(Json::parse(bare.out)).first, 0);
}

// A jitdump cut short (the runtime was still writing) names what it holds,
// and where it ends is a note (-v), not a warning: a runtime's jitdump read
// while it writes always ends inside a record. Another process's jitdump
// under this pid's name is refused with a warning. Either way the answer
// stands (exit 0).
TEST(DotnetHuntTest, ACutOrForeignJitdumpIsSaidAndTheAnswerStands) {
  const Hunt& h = TheHunt();
  const std::string xz = DataDir() + "/jit-" + h.pid + ".dump.xz";
  const std::string args = "attribute --by commit --group stack -i " + h.trace + " --pid " + h.pid + " --address " +
                           h.core + " --maddress " + h.runtime_table + " --perf-map-dir ";
  const std::string cut = MapDirWithJitdump(h, "jitdump-cut", "xz -dc '" + xz + "' | head -c 300001");
  CliRun run = Pageblame(args + cut);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.err, ::testing::Not(HasSubstr("jit-" + h.pid + ".dump"))) << run.err;
  EXPECT_THAT(run.err, ::testing::Not(HasSubstr("warning"))) << run.err;
  EXPECT_THAT(run.out, HasSubstr("Program::LeakNativeMemory <- Program::Main"));
  CliRun verbose = Pageblame(args + cut + " -v");
  ASSERT_EQ(verbose.exit_code, 0) << verbose.err;
  EXPECT_THAT(verbose.err, HasSubstr("pageblame: note: " + cut + "/jit-" + h.pid + ".dump: offset "));
  EXPECT_THAT(verbose.err, HasSubstr("is cut by the end of the file's 300001 bytes"));
  EXPECT_EQ(verbose.out, run.out);

  // Another process's jitdump: one of the bundled recording's (the live
  // hunt runs this test on a fresh recording, with other pids).
  const std::string other =
      TracePath(h.pid == "23705" ? "dotnet/jit-23474.dump.xz" : "dotnet/jit-23705.dump.xz");
  const std::string foreign = MapDirWithJitdump(h, "jitdump-foreign", "xz -dc '" + other + "'");
  run = Pageblame(args + foreign);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.err, HasSubstr("offset 20: the jitdump of pid "));
  EXPECT_THAT(run.err, HasSubstr("not of pid " + h.pid + "; not used to name frames"));
  EXPECT_THAT(run.out, HasSubstr("malloc <- Program::LeakNativeMemory <- Program::Main"));
}

// The pages of an attribute --json answer's regions.
PageSet AnswerPages(const Json& answer) {
  PageSet out;
  for (const Json& r : answer["regions"]) out.Add(Hex(r["start"]) & ~(kPage - 1), (Hex(r["end"]) + kPage - 1) & ~(kPage - 1));
  return out;
}

// The truth's pages: the native leaks' and the managed arrays'.
void TruthPages(const Hunt& h, PageSet* native, PageSet* managed) {
  for (const TruthRange& t : h.truth) {
    if (IsReservedOnly(t)) continue;
    PageSet p = PagesOf(t);
    for (const auto& [start, end] : p.ranges()) (IsManaged(t) ? managed : native)->Add(start, end);
  }
}

// --unaccounted needs no dump: the address space is the trace's own at the
// moment asked (here the end), minus the runtime's table. Every native
// leak's pages are in the answer and no managed array's, and the top rows
// are the five leaking C# methods.
TEST(DotnetHuntTest, UnaccountedFromTheTraceMinusTheRuntimeTable) {
  const Hunt& h = TheHunt();
  CliRun run = Pageblame("attribute --json --unaccounted -i " + h.trace + " --pid " + h.pid + " --maddress " +
                         h.runtime_table + kSymbols());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.err, HasSubstr("of its"));
  EXPECT_THAT(run.err, HasSubstr("accessible memory is not in the runtime's table (" + h.runtime_table + ")"));
  const Json answer = Json::parse(run.out);
  PageSet native, managed;
  TruthPages(h, &native, &managed);
  const PageSet pages = AnswerPages(answer);
  EXPECT_TRUE(native.Minus(pages).empty()) << native.Minus(pages).Describe();
  EXPECT_TRUE(managed.Intersect(pages).empty()) << managed.Intersect(pages).Describe();
  CliRun text = Pageblame("attribute --unaccounted --group stack -i " + h.trace + " --pid " + h.pid + " --maddress " +
                          h.runtime_table + kSymbols());
  ASSERT_EQ(text.exit_code, 0) << text.err;
  for (const char* method : {"Program::LeakNativeMemory", "Program::LeakNativeMmap", "Program::LeakHGlobal",
                             "Program::LeakMemoryMappedFile"}) {
    EXPECT_THAT(text.out, HasSubstr(method));
  }
}

// The table `record` saves beside the trace (TRACE.runtime/PID-TIME.txt):
// the latest at or before the moment asked; one older than the trace is
// another recording's and is not used.
TEST(DotnetHuntTest, UnaccountedTakesTheTableRecordSaved) {
  const Hunt& h = TheHunt();
  const std::string dir = ScratchPath("saved-table");
  const std::string trace = dir + "/dotnet-leak.data";
  ASSERT_EQ(Shell("mkdir -p '" + trace + ".runtime' && ln -s '" + h.trace + "' '" + trace + "' && cp '" +
                  h.runtime_table + "' '" + trace + ".runtime/" + h.pid + "-99999000000000.txt'")
                .exit_code,
            0);
  CliRun run = Pageblame("attribute --json --unaccounted -i " + trace + " --pid " + h.pid + kSymbols());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.err, HasSubstr(".runtime/" + h.pid + "-99999000000000.txt, saved by record then"));
  EXPECT_THAT(run.err, HasSubstr("pid " + h.pid + " at 99999.000000"));
  PageSet native, managed;
  TruthPages(h, &native, &managed);
  EXPECT_TRUE(native.Minus(AnswerPages(Json::parse(run.out))).empty());
  // Without --pid: the one process of the trace with saved tables.
  CliRun no_pid = Pageblame("attribute --json --unaccounted -i " + trace + kSymbols());
  ASSERT_EQ(no_pid.exit_code, 0) << no_pid.err;
  EXPECT_EQ(Json::parse(no_pid.out)["regions"].size(), Json::parse(run.out)["regions"].size());
  // The HTML report attributes the same regions.
  const std::string page = dir + "/report.html";
  CliRun report = Pageblame("report --unaccounted -i " + trace + " -o " + page + kSymbols());
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_THAT(Shell("grep -c \"not in the runtime's table " + trace + ".runtime/\" " + page).out, HasSubstr("1"));

  const std::string stale = ScratchPath("stale-table") + "/dotnet-leak.data";
  ASSERT_EQ(Shell("mkdir -p '" + stale + ".runtime' && ln -s '" + h.trace + "' '" + stale + "' && cp '" +
                  h.runtime_table + "' '" + stale + ".runtime/" + h.pid + "-1000.txt'")
                .exit_code,
            0);
  run = Pageblame("attribute --unaccounted -i " + stale + " --pid " + h.pid);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.err, HasSubstr("no .NET runtime table of pid " + h.pid + " saved beside " + stale));
  EXPECT_THAT(run.err, HasSubstr("--maddress FILE"));
}

// Bad requests: regions from two places, no process chosen among several.
TEST(DotnetHuntTest, UnaccountedSaysWhatIsMissing) {
  const Hunt& h = TheHunt();
  CliRun run = Pageblame("attribute --unaccounted -i " + h.trace + " --pid " + h.pid + " --regions " +
                         h.runtime_table);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("not with --regions or --address"));
  run = Pageblame("attribute --unaccounted -i " + h.trace + " --maddress " + h.runtime_table);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("choose it with --pid"));
}

// SOS eeheap (what `dotnet-dump analyze DUMP -c eeheap` prints on Linux) is
// a runtime table too: the GC's regions and the loader heaps, no images.
// The diff of the dump against it leaves the app's native memory and none
// of its managed arrays; attribute names the leaking methods from it.
TEST(DotnetHuntTest, EeheapIsARuntimeTable) {
  const Hunt& h = TheHunt();
  const std::string eeheap = FindFile("dotnet-leak." + h.pid, ".eeheap.txt");
  ASSERT_FALSE(eeheap.empty());
  CliRun diff = Pageblame("diff --json " + h.core + " " + eeheap);
  ASSERT_EQ(diff.exit_code, 0) << diff.err;
  PageSet unaccounted;
  const Json answer = Json::parse(diff.out);  // kept: the loop below refers into it
  for (const Json& p : answer["unaccounted"]["pieces"]) {
    unaccounted.Add(Hex(p["start"]) & ~(kPage - 1), (Hex(p["end"]) + kPage - 1) & ~(kPage - 1));
  }
  for (const TruthRange& t : h.truth) {
    if (IsReservedOnly(t)) continue;
    if (IsManaged(t)) {
      EXPECT_TRUE(PagesOf(t).Intersect(unaccounted).empty()) << t.what << ": GC memory unaccounted";
    } else {
      EXPECT_TRUE(PagesOf(t).Minus(unaccounted).empty())
          << t.method << " " << t.what << ": not unaccounted:" << PagesOf(t).Minus(unaccounted).Describe();
    }
  }
  CliRun run = Pageblame("attribute --by commit --group stack -i " + h.trace + " --pid " + h.pid + " --address " +
                         h.core + " --maddress " + eeheap + kSymbols());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("malloc <- Program::LeakNativeMemory <- Program::Main"));
}

}  // namespace
}  // namespace pageblame::testing

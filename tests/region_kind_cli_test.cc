// Every region kind (processor/analysis/region_kind.h) on a real region of a
// bundled trace, through the CLI: the .NET hunt (traces/dotnet/), HotSpot
// (jvm-dwarf.data), V8 (node-dwarf.data); and the first screen of
// attribute/growth on the .NET hunt, --kind, --hide, --detail.
#include <dirent.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli_runner.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
constexpr uint64_t kMiB = 1 << 20;

// The .NET recording's pid, from its runtime table's name
// (dotnet-leak.PID.clr-regions.txt).

std::string DotnetArgs() {
  return " -i " + TracePath("dotnet/dotnet-leak.data") + " --pid " + DotnetPid();
}

Json RunJson(const std::string& args) {
  CliRun r = Pageblame(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? Json::parse(r.out) : Json();
}

uint64_t Size(const Json& r) {
  return std::stoull(r["end"].get<std::string>(), nullptr, 16) - std::stoull(r["start"].get<std::string>(), nullptr, 16);
}

// True if some frame of the region's creating call is named with `name` in it.
bool MadeBy(const Json& r, const std::string& name) {
  if (r["origin"].is_null()) return false;
  for (const Json& f : r["origin"]["stack"]) {
    if (f["symbol"].is_string() && absl::StrContains(f["symbol"].get<std::string>(), name)) return true;
  }
  return false;
}

// The regions that `pred` picks, with the kind each one has.
std::vector<std::string> KindsOf(const Json& maps, const std::function<bool(const Json&)>& pred) {
  std::vector<std::string> out;
  for (const Json& r : maps) {
    if (pred(r)) out.push_back(r["kind"]);
  }
  return out;
}

std::string Path(const Json& r) { return r["path"].is_string() ? r["path"].get<std::string>() : ""; }

TEST(RegionKindCliTest, EveryKindOnTheDotnetHunt) {
  const Json maps = RunJson("maps --json" + DotnetArgs());
  ASSERT_TRUE(maps.is_array());
  auto all_are = [&](const std::string& kind, const std::function<bool(const Json&)>& pred) {
    const std::vector<std::string> kinds = KindsOf(maps, pred);
    EXPECT_FALSE(kinds.empty()) << kind;
    for (const std::string& k : kinds) EXPECT_EQ(k, kind);
  };
  // Program::ChurnManagedHeap started a thread: its 8 MiB stack.
  all_are("thread stack", [](const Json& r) {
    return r["prot"] == "rw-" && Size(r) == 8 * kMiB && MadeBy(r, "ChurnManagedHeap") && MadeBy(r, "pthread_create");
  });
  // NativeMemory.Alloc -> malloc -> sysmalloc's mmap.
  all_are("malloc", [](const Json& r) { return r["prot"] == "rw-" && MadeBy(r, "Program::LeakNativeMemory"); });
  all_are("heap", [](const Json& r) { return Path(r) == "[heap]"; });
  // The MemoryMappedFile view: a memfd the program wrote.
  all_are("file", [](const Json& r) { return MadeBy(r, "SystemNative_MMap") && MadeBy(r, "LeakMemoryMappedFile"); });
  // libcoreclr.so, and every segment of the dotnet executable (its data too).
  all_are("image", [](const Json& r) { return absl::EndsWith(Path(r), "/libcoreclr.so"); });
  all_are("image", [](const Json& r) { return absl::EndsWith(Path(r), "/dotnet"); });
  // The JIT's double-mapped executable memory.
  all_are("jit code", [](const Json& r) { return r["prot"] != "---" && absl::StrContains(Path(r), "doublemapper"); });
  // The GC's 47 GiB reservation, and every other PROT_NONE region.
  all_are("reservation", [](const Json& r) { return r["prot"] == "---"; });
  EXPECT_THAT(KindsOf(maps, [](const Json& r) { return Size(r) > (uint64_t{40} << 30); }),
              ::testing::ElementsAre("reservation"));
  // The P/Invoke's own mmap: plain anonymous memory.
  all_are("anon", [](const Json& r) { return MadeBy(r, "leak_native_mmap") && r["prot"] == "rw-"; });
}

TEST(RegionKindCliTest, GcHeapsAndJitCodeOfHotSpotAndV8) {
  const Json jvm = RunJson("maps --json -i " + TracePath("jvm-dwarf.data"));
  const std::vector<std::string> heap =
      KindsOf(jvm, [](const Json& r) { return r["prot"] == "rw-" && MadeBy(r, "Universe::reserve_heap"); });
  ASSERT_FALSE(heap.empty());
  for (const std::string& k : heap) EXPECT_EQ(k, "gc heap");
  const std::vector<std::string> code =
      KindsOf(jvm, [](const Json& r) { return r["prot"] == "rwx" && MadeBy(r, "CodeCache::initialize"); });
  EXPECT_THAT(code, ::testing::ElementsAre("jit code"));

  const Json node = RunJson("maps --json -i " + TracePath("node-dwarf.data"));
  const std::vector<std::string> pages = KindsOf(
      node, [](const Json& r) { return r["prot"] == "rw-" && MadeBy(r, "v8::internal::MemoryAllocator::AllocatePage"); });
  ASSERT_FALSE(pages.empty());
  for (const std::string& k : pages) EXPECT_EQ(k, "gc heap");
  const std::vector<std::string> jit = KindsOf(node, [](const Json& r) { return r["prot"] == "rwx" && Path(r).empty(); });
  ASSERT_FALSE(jit.empty());
  for (const std::string& k : jit) EXPECT_EQ(k, "jit code");
}

// Where the runtime's own table says a range is the GC's, attribute says so.
TEST(RegionKindCliTest, TheRuntimesTableNamesTheGcHeap) {
  const std::string table = TracePath("dotnet/dotnet-leak." + DotnetPid() + ".clr-regions.txt");
  const Json a = RunJson("attribute --json" + DotnetArgs() + " --regions " + table + " --kind gc-heap");
  ASSERT_TRUE(a.is_object());
  ASSERT_FALSE(a["regions"].empty());
  uint64_t bytes = 0;
  for (const Json& r : a["regions"]) {
    EXPECT_EQ(r["kind"], "gc heap");
    bytes += r["bytes"].get<uint64_t>();
  }
  EXPECT_GT(bytes, 16 * kMiB);  // the app's managed arrays, at least
  // Without the filter, the table's images are images.
  const Json all = RunJson("attribute --json" + DotnetArgs() + " --regions " + table);
  EXPECT_GT(all["regions"].size(), a["regions"].size());
  bool image = false;
  for (const Json& r : all["regions"]) image |= r["kind"] == "image";
  EXPECT_TRUE(image);
}

TEST(RegionKindCliTest, KindFiltersMaps) {
  const Json maps = RunJson("maps --json --kind malloc,heap" + DotnetArgs());
  ASSERT_FALSE(maps.empty());
  bool heap = false;
  for (const Json& r : maps) {
    EXPECT_TRUE(r["kind"] == "malloc" || r["kind"] == "heap") << r.dump();
    heap |= r["kind"] == "heap";
  }
  EXPECT_TRUE(heap);
  CliRun text = Pageblame("maps --kind thread-stack" + DotnetArgs());
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr(" thread stack "));
  EXPECT_THAT(text.out, Not(HasSubstr(" malloc ")));
  CliRun bad = Pageblame("maps --kind stacks" + DotnetArgs());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("unknown kind 'stacks'"));
}

// The hunt's first screen is the answer: the leaking method with its bytes
// in the first row, the kind, and the reservations apart; at 120 columns
// every line fits, the methods' names whole.
TEST(RegionKindCliTest, AttributesFirstScreenIsTheAnswer) {
  const std::string core = ScratchPath("dotnet.core");
  ASSERT_EQ(Shell("xz -dc " + TracePath("dotnet/dotnet-leak." + DotnetPid() + ".core.trim.xz") + " > " + core).exit_code,
            0);
  const std::string args = DotnetArgs() + " --address " + core + " --maddress " +
                           TracePath("dotnet/dotnet-leak." + DotnetPid() + ".clr-regions.txt");
  CliRun r = Shell(std::string("COLUMNS=120 ") + PAGEBLAME_BINARY_DIR + "/bin/pageblame attribute" + args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> lines = absl::StrSplit(r.out, '\n');
  ASSERT_GT(lines.size(), 5u);
  EXPECT_EQ(lines[2], "the application's methods by committed bytes (credited to the committing call, else the creating one):");
  EXPECT_EQ(lines[3], "   #  committed  regions  calls  stacks  kind          app method");
  EXPECT_EQ(lines[4], "   1   32.0 MiB        2      8       1  malloc*       Program::LeakNativeMemory -> malloc");
  EXPECT_LE(lines.size(), 40u) << "the first screen fits a terminal";
  for (size_t i = 3; i < lines.size(); ++i) EXPECT_LE(lines[i].size(), 120u) << lines[i];
  EXPECT_THAT(r.out, HasSubstr("total: "));
  EXPECT_THAT(r.out, Not(HasSubstr("\nstack #1: ")));

  // --frames all --detail: today's information (every region, full stacks).
  CliRun d = Pageblame("attribute --frames all --detail" + args);
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_THAT(d.out, HasSubstr("\nstack #1: 33587200 bytes (32.0 MiB, 32.0 MiB committed, malloc) in 2 regions, 8 calls"));
  EXPECT_THAT(d.out, HasSubstr(" sysmalloc+0x"));
  EXPECT_THAT(d.out, HasSubstr("  12.0 MiB  stack #1    3 calls, first mmap at "));
  EXPECT_THAT(d.out, HasSubstr(": __GI___mmap64 (inlined) <- __mmap <- sysmalloc_mmap.constprop.0 <- sysmalloc\n"));

  // --hide: the summaries skip the frames it matches.
  CliRun h = Pageblame("attribute --group stack --hide Program::Main" + args);
  ASSERT_EQ(h.exit_code, 0) << h.err;
  EXPECT_THAT(h.out, HasSubstr("  malloc*       malloc <- Program::LeakNativeMemory\n"));
  EXPECT_EQ(Pageblame("attribute --hide '(' " + args).exit_code, 2);
}

TEST(RegionKindCliTest, GrowthsFirstScreenRanksCommittedBytesAndPutsReservationsApart) {
  CliRun r = Pageblame("growth --group stack" + DotnetArgs());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t reserved = r.out.find("\nreserved, not committed (PROT_NONE, not counted above): +50.0 GiB");
  ASSERT_NE(reserved, std::string::npos) << r.out;
  const size_t start = r.out.find("\nstacks by committed growth:\n");
  ASSERT_LT(start, reserved);
  const std::string table = r.out.substr(start, reserved - start);
  // No reservation in the ranking; the leaking methods are in it with their bytes.
  EXPECT_THAT(table, Not(HasSubstr("GiB")));
  EXPECT_THAT(table, HasSubstr("   +32.0 MiB   32.0 MiB        8      8  malloc*       malloc <- Program::LeakNativeMemory"));
  EXPECT_THAT(table, HasSubstr("  malloc*       malloc <- Program::LeakHGlobal <- Program::Main"));
  // By method (the default): the leaks lead, the 8 MiB thread stacks
  // (mostly pages nobody touched) rank after every one of them.
  CliRun m = Pageblame("growth" + DotnetArgs());
  ASSERT_EQ(m.exit_code, 0) << m.err;
  const size_t m_start = m.out.find("\nthe application's methods by committed growth:\n");
  const size_t m_end = m.out.find("\n  ----", m_start);
  ASSERT_NE(m_end, std::string::npos) << m.out;
  const std::string methods = m.out.substr(m_start, m_end - m_start);
  EXPECT_THAT(methods, HasSubstr("   +32.0 MiB   32.0 MiB        8      8       1  malloc*       Program::LeakNativeMemory -> malloc\n"));
  const size_t threads = methods.find("  thread stack  ");
  ASSERT_NE(threads, std::string::npos) << methods;
  for (const char* leak : {"  Program::LeakNativeMemory -> ", "  Program::LeakHGlobal -> ", "  leak_native_mmap -> ",
                           "  Program::LeakMemoryMappedFile -> "}) {
    EXPECT_LT(methods.find(leak), threads) << leak << "\n" << methods;
  }
  EXPECT_EQ(methods.find("  anon  ", threads), std::string::npos) << "a leak after the thread stacks:\n" << methods;
  const Json j = RunJson("growth --json" + DotnetArgs());
  for (const Json& s : j["stacks"]) {
    if (s["to_committed_bytes"] == 0 && s["to_bytes"] != 0) {
      EXPECT_EQ(s["kind"], "reservation") << s.dump();
    }
  }
}

}  // namespace
}  // namespace pageblame::testing

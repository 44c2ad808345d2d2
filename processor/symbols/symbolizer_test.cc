#include "processor/symbols/symbolizer.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/symbols/build_id.h"
#include "processor/symbols/dso_locator.h"
#include "processor/symbols/elf_handle.h"
#include "processor/symbols/test_util.h"
#include "processor/symbols/symbolizer_for_test.h"

namespace pageblame::symbols {
namespace {

using testing::SelfMapping;
using testing::TempDir;
using testing::TestElf;
using ::testing::Contains;

constexpr uint32_t kPid = 4242;
constexpr const char* kLibcFunctions[] = {"mmap", "munmap", "getpid", "qsort", "malloc"};

// libc's own definition, not an interposer's (ASan intercepts mmap, munmap...).
uint64_t Addr(const char* name) {
  static void* const libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  return libc ? reinterpret_cast<uint64_t>(dlsym(libc, name)) : 0;
}

// Feeds every file mapping of this test process to `sym` as pid `pid`, the
// way MMAP2 records would describe them.
void AddSelfMappings(SymbolizerWithMaps* sym, uint32_t pid, uint64_t time = 0) {
  for (const SelfMapping& m : testing::ReadSelfMaps()) {
    if (m.path.empty()) continue;
    sym->maps().AddMapping(pid, time, m.start, m.end - m.start, m.pgoff, m.path, "");
  }
}

SymbolizerOptions IsolatedOptions(const TempDir& dir) {
  SymbolizerOptions options;
  options.debug_dir = dir.path() + "/no-cache";  // never the real ~/.debug
  return options;
}

TEST(SymbolizerTest, LibcFunctionsAreNamed) {
  TempDir dir;
  SymbolizerWithMaps sym(IsolatedOptions(dir));
  AddSelfMappings(&sym, kPid);
  for (const char* name : kLibcFunctions) {
    SCOPED_TRACE(name);
    uint64_t addr = Addr(name);
    ASSERT_NE(addr, 0u);
    Frame f = sym.Symbolize(kPid, 10, addr + 3);
    EXPECT_EQ(f.ip, addr + 3);
    ASSERT_TRUE(f.symbol.has_value());
    // The chosen alias is a name of this function (mmap may print as __mmap).
    EXPECT_EQ(Addr(f.symbol->c_str()), addr) << *f.symbol;
    EXPECT_EQ(f.offset, 3u);
    std::optional<SelfMapping> m = testing::SelfMappingFor(addr);
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(f.dso, m->path);
  }
  SymbolizerStats stats = sym.stats();
  // libc once for all five (plus its debug file where libc6-dbg is installed).
  EXPECT_EQ(stats.elfs_loaded - stats.debug_files_loaded, 1u);
  EXPECT_LE(stats.debug_files_loaded, 1u);
  EXPECT_EQ(stats.lookups, 5u);
  EXPECT_EQ(stats.resolved, 5u);
}

TEST(SymbolizerTest, CppSymbolOfTheTestBinaryIsDemangled) {
  TempDir dir;
  SymbolizerWithMaps sym(IsolatedOptions(dir));
  AddSelfMappings(&sym, kPid);
  uint64_t addr = reinterpret_cast<uint64_t>(&testing::MarkerFunction);
  Frame f = sym.Symbolize(kPid, 10, addr + 1);
  ASSERT_TRUE(f.symbol.has_value());
  EXPECT_EQ(*f.symbol, "pageblame::symbols::testing::MarkerFunction");  // as perf prints it
  EXPECT_EQ(f.offset, 1u);
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  ASSERT_GT(n, 0);
  EXPECT_EQ(f.dso, std::string(exe, n));
}

TEST(SymbolizerTest, FullSignaturesWhenAsked) {
  TempDir dir;
  SymbolizerOptions options = IsolatedOptions(dir);
  options.demangle_params = true;
  SymbolizerWithMaps sym(options);
  AddSelfMappings(&sym, kPid);
  Frame f = sym.Symbolize(kPid, 10, reinterpret_cast<uint64_t>(&testing::MarkerFunction));
  EXPECT_EQ(f.symbol, "pageblame::symbols::testing::MarkerFunction(int)");
  EXPECT_EQ(f.offset, 0u);
}

TEST(SymbolizerTest, RepeatedLookupsAreCached) {
  TempDir dir;
  SymbolizerWithMaps sym(IsolatedOptions(dir));
  AddSelfMappings(&sym, kPid);
  uint64_t addr = Addr("getpid");
  Frame a = sym.Symbolize(kPid, 10, addr + 2);
  Frame b = sym.Symbolize(kPid, 20, addr + 2);
  EXPECT_EQ(a.symbol, b.symbol);
  EXPECT_EQ(a.offset, b.offset);
  EXPECT_EQ(sym.stats().cache_hits, 1u);
  EXPECT_EQ(sym.stats().elfs_loaded - sym.stats().debug_files_loaded, 1u);
}

// The file mapping of this process that holds `addr`.
SelfMapping MappingOf(uint64_t addr) {
  for (const SelfMapping& m : testing::ReadSelfMaps()) {
    if (!m.path.empty() && m.start <= addr && addr < m.end) return m;
  }
  return SelfMapping();
}

TEST(SymbolizerTest, APreloadedTableAnswersAsIfLoadedOnFirstUse) {
  TempDir dir;
  const std::string libc = MappingOf(Addr("getpid")).path;
  ASSERT_FALSE(libc.empty());
  SymbolizerWithMaps lazy(IsolatedOptions(dir)), ahead(IsolatedOptions(dir));
  AddSelfMappings(&lazy, kPid);
  AddSelfMappings(&ahead, kPid);
  ahead.Preload(libc, "");
  ahead.Preload(libc, "");  // once is enough
  EXPECT_EQ(ahead.stats().elfs_loaded, 0u);  // counted when used, not before
  for (const char* name : kLibcFunctions) {
    SCOPED_TRACE(name);
    Frame a = lazy.Symbolize(kPid, 10, Addr(name) + 1);
    Frame b = ahead.Symbolize(kPid, 10, Addr(name) + 1);
    EXPECT_EQ(a.symbol, b.symbol);
    EXPECT_EQ(a.dso, b.dso);
    EXPECT_EQ(a.offset, b.offset);
  }
  EXPECT_EQ(ahead.stats().tables_preloaded, 1u);
  EXPECT_EQ(lazy.stats().tables_preloaded, 0u);
  EXPECT_EQ(ahead.stats().elfs_loaded, lazy.stats().elfs_loaded);
  EXPECT_EQ(ahead.stats().debug_files_loaded, lazy.stats().debug_files_loaded);
  // Once in use, a table is not loaded ahead again.
  ahead.Preload(libc, "");
  lazy.Preload(libc, "");
  EXPECT_EQ(ahead.stats().elfs_loaded, lazy.stats().elfs_loaded);
  EXPECT_EQ(lazy.stats().tables_preloaded, 0u);
}

TEST(SymbolizerTest, NamesWithoutAnElfAreNotPreloaded) {
  TempDir dir;
  SymbolizerWithMaps sym(IsolatedOptions(dir));
  // /dev/zero exists: a lookup in it would read a device, not an ELF.
  for (const char* name : {"//anon", "/dev/zero (deleted)", "[heap]", "/memfd:jit (deleted)",
                           "[vdso]", "/no/such/file", "relative/path"}) {
    sym.Preload(name, "");
  }
  sym.maps().AddMapping(kPid, 0, 0x10000, 0x1000, 0, "/dev/zero (deleted)", "");
  sym.Symbolize(kPid, 1, 0x10010);
  SymbolizerStats stats = sym.stats();
  EXPECT_EQ(stats.tables_preloaded, 0u);
  EXPECT_EQ(stats.elfs_loaded, 0u);
  EXPECT_EQ(stats.elfs_bad, 0u);
  EXPECT_TRUE(Symbolizer::MayHaveElf("/usr/lib/x86_64-linux-gnu/libc.so.6"));
  EXPECT_TRUE(Symbolizer::MayHaveElf("/no/such/file"));  // a name; finding it is Locate's
  for (const char* name : {"//anon", "/dev/zero (deleted)", "/memfd:jit (deleted)", "[vdso]",
                           "[anon:dalvik]", "/SYSV00000000 (deleted)", ""}) {
    EXPECT_FALSE(Symbolizer::MayHaveElf(name)) << name;
  }
}

TEST(SymbolizerTest, PreloadFromAnotherThreadWhileThisOneSymbolizes) {
  TempDir dir;
  SymbolizerWithMaps sym(IsolatedOptions(dir)), lazy(IsolatedOptions(dir));
  AddSelfMappings(&sym, kPid);
  AddSelfMappings(&lazy, kPid);
  std::vector<std::string> paths;
  for (const SelfMapping& m : testing::ReadSelfMaps()) {
    if (!m.path.empty() && m.path[0] == '/') paths.push_back(m.path);
  }
  std::thread other([&] {
    for (const std::string& p : paths) sym.Preload(p, "");
  });
  for (int round = 0; round < 3; ++round) {
    for (const char* name : kLibcFunctions) {
      EXPECT_EQ(sym.Symbolize(kPid, 10, Addr(name) + 1).symbol,
                lazy.Symbolize(kPid, 10, Addr(name) + 1).symbol);
    }
    sym.ImageSegments(MappingOf(Addr("getpid")).path, "");
  }
  other.join();
  const uint64_t marker = reinterpret_cast<uint64_t>(&testing::MarkerFunction);
  EXPECT_EQ(sym.Symbolize(kPid, 10, marker).symbol, "pageblame::symbols::testing::MarkerFunction");
  // Each table was read once, ahead or not: the counts are the lazy ones.
  lazy.Symbolize(kPid, 10, marker);
  lazy.ImageSegments(MappingOf(Addr("getpid")).path, "");
  EXPECT_EQ(sym.stats().elfs_loaded, lazy.stats().elfs_loaded);
}

TEST(SymbolizerTest, IpOutsideAnyFunctionIsUnresolvedButKeepsTheDso) {
  TempDir dir;
  SymbolizerWithMaps sym(IsolatedOptions(dir));
  std::optional<SelfMapping> m = testing::SelfMappingFor(Addr("getpid"));
  ASSERT_TRUE(m.has_value());
  // The same file mapped from offset 0: the ELF header, no function there.
  sym.maps().AddMapping(kPid, 0, 0x100000, 0x1000, 0, m->path, "");
  Frame f = sym.Symbolize(kPid, 10, 0x100010);
  EXPECT_EQ(f.dso, m->path);
  EXPECT_FALSE(f.symbol.has_value());
  EXPECT_EQ(f.offset, 0u);
}

TEST(SymbolizerTest, IpInNoMappingIsEmpty) {
  TempDir dir;
  SymbolizerOptions options = IsolatedOptions(dir);
  options.trace_path = dir.path() + "/perf.data";
  SymbolizerWithMaps sym(options);
  sym.maps().AddMapping(kPid, 0, 0x100000, 0x1000, 0, "/usr/lib/whatever.so", "");
  Frame f = sym.Symbolize(kPid, 10, 0x5000);
  EXPECT_EQ(f.ip, 0x5000u);
  EXPECT_FALSE(f.symbol.has_value());
  EXPECT_EQ(f.dso, "");
  Frame g = sym.Symbolize(999999, 10, 0x5000);  // unknown process
  EXPECT_FALSE(g.symbol.has_value());
  EXPECT_EQ(g.dso, "");
  EXPECT_EQ(sym.stats().no_mapping, 2u);
}

TEST(SymbolizerTest, MissingDsoKeepsItsNameAndIsLookedForOnce) {
  TempDir dir;
  SymbolizerWithMaps sym(IsolatedOptions(dir));
  const std::string path = dir.path() + "/gone/libfoo.so";
  sym.maps().AddMapping(kPid, 0, 0x100000, 0x2000, 0, path, "");
  Frame f = sym.Symbolize(kPid, 10, 0x100123);
  EXPECT_EQ(f.dso, path);
  EXPECT_FALSE(f.symbol.has_value());
  sym.Symbolize(kPid, 10, 0x100456);
  sym.Symbolize(kPid, 10, 0x100123);
  SymbolizerStats stats = sym.stats();
  EXPECT_EQ(stats.dsos_missing, 1u);
  EXPECT_THAT(stats.missing_dsos, ::testing::ElementsAre(path));
  EXPECT_EQ(stats.elfs_loaded, 0u);
  EXPECT_EQ(stats.cache_hits, 1u);
}

TEST(SymbolizerTest, WrongBuildIdIsNotUsed) {
  TempDir dir;
  SymbolizerWithMaps sym(IsolatedOptions(dir));
  std::optional<SelfMapping> m = testing::SelfMappingFor(Addr("getpid"));
  ASSERT_TRUE(m.has_value());
  sym.maps().AddMapping(kPid, 0, m->start, m->end - m->start, m->pgoff, m->path,
                 std::string(20, '\x01'));
  Frame f = sym.Symbolize(kPid, 10, Addr("getpid"));
  EXPECT_EQ(f.dso, m->path);
  EXPECT_FALSE(f.symbol.has_value());
  EXPECT_EQ(sym.stats().build_id_mismatches, 1u);
  EXPECT_EQ(sym.stats().dsos_missing, 1u);
}

// The recorded path no longer exists; the build-id cache has the file, found
// by the MMAP2 record's build id or the HEADER_BUILD_ID feature's.
TEST(SymbolizerTest, BuildIdCacheServesAFileThatMovedAway) {
  uint64_t addr = Addr("getpid");
  std::optional<SelfMapping> m = testing::SelfMappingFor(addr);
  ASSERT_TRUE(m.has_value());
  auto elf = ElfHandle::Open(m->path);
  ASSERT_TRUE(elf.ok());
  const std::string build_id = elf->BuildId();
  ASSERT_FALSE(build_id.empty());
  TempDir dir;
  SymbolizerOptions options;
  options.debug_dir = dir.path() + "/debug";
  testing::MakeSymlink(m->path, DsoLocator::BuildIdLinkPath(options.debug_dir,
                                                            BuildIdToHex(build_id)) +
                                    "/elf");
  const std::string recorded = "/recorded/elsewhere/libc.so.6";

  SymbolizerWithMaps from_record(options);
  from_record.maps().AddMapping(kPid, 0, m->start, m->end - m->start, m->pgoff, recorded, build_id);
  Frame f = from_record.Symbolize(kPid, 10, addr);
  EXPECT_EQ(f.dso, recorded);
  ASSERT_TRUE(f.symbol.has_value());
  EXPECT_EQ(Addr(f.symbol->c_str()), addr);

  SymbolizerWithMaps from_header(options);
  from_header.maps().AddBuildId(recorded, build_id + std::string(4, '\0'));  // perf's padded form
  from_header.maps().AddMapping(kPid, 0, m->start, m->end - m->start, m->pgoff, recorded, "");
  Frame g = from_header.Symbolize(kPid, 10, addr);
  ASSERT_TRUE(g.symbol.has_value());
  EXPECT_EQ(*g.symbol, *f.symbol);
}

// Symbols only in a separate debug file (found by build id under symfs), the
// address layout from the binary.
TEST(SymbolizerTest, SeparateDebugFileUnderSymfs) {
  TempDir dir;
  const std::string id(20, '\x3c');
  const std::string hex = BuildIdToHex(id);
  TestElf binary;
  binary.text_vaddr = 0x5000;
  binary.build_id = id;
  binary.symbols = {{"exported", 0x5000, 0x100}};
  binary.dynsym = true;
  TestElf debug = binary;
  debug.dynsym = false;
  debug.debug_only = true;
  debug.symbols = {{"exported", 0x5000, 0x100},
                   {"_ZN2ns6helperEv", 0x5200, 0x80, 2 /*STT_FUNC*/, 0 /*STB_LOCAL*/}};
  ASSERT_TRUE(testing::WriteTestElf(dir.path() + "/root/opt/app/libapp.so", binary).ok());
  ASSERT_TRUE(testing::WriteTestElf(dir.path() + "/root/usr/lib/debug/.build-id/" +
                                        hex.substr(0, 2) + "/" + hex.substr(2) + ".debug",
                                    debug)
                  .ok());
  SymbolizerOptions options = IsolatedOptions(dir);
  options.symfs = dir.path() + "/root";
  SymbolizerWithMaps sym(options);
  // .text is at file offset kTextOffset: map the page holding it at 0x40000000.
  sym.maps().AddMapping(kPid, 0, 0x40000000, 0x1000, TestElf::kTextOffset, "/opt/app/libapp.so", id);
  Frame f = sym.Symbolize(kPid, 10, 0x40000000 + 0x210);
  ASSERT_TRUE(f.symbol.has_value());
  EXPECT_EQ(*f.symbol, "ns::helper");
  EXPECT_EQ(f.offset, 0x10u);
  EXPECT_EQ(f.dso, "/opt/app/libapp.so");
  Frame g = sym.Symbolize(kPid, 10, 0x40000000 + 0x20);
  ASSERT_TRUE(g.symbol.has_value());
  EXPECT_EQ(*g.symbol, "exported");
  EXPECT_EQ(sym.stats().elfs_loaded, 2u);
  EXPECT_EQ(sym.stats().debug_files_loaded, 1u);
}

TEST(SymbolizerTest, JitFramesFromPerfMapBesideTheTrace) {
  TempDir dir;
  testing::WriteFile(dir.path() + "/perf-4242.map",
                     "7f1000001000 80 LazyCompile:*hot /app/main.js:3:10\n"
                     "7f1000001080 40 Builtin:ArrayPush\n"
                     "7f2000000000 100 Stub:OutsideAnyMapping\n");
  SymbolizerOptions options = IsolatedOptions(dir);
  options.trace_path = dir.path() + "/perf.data";
  SymbolizerWithMaps sym(options);
  sym.maps().AddMapping(kPid, 0, 0x7f1000000000, 0x100000, 0, "//anon", "");
  Frame f = sym.Symbolize(kPid, 10, 0x7f1000001010);
  ASSERT_TRUE(f.symbol.has_value());
  EXPECT_EQ(*f.symbol, "LazyCompile:*hot /app/main.js:3:10");
  EXPECT_EQ(f.offset, 0x10u);
  EXPECT_EQ(f.dso, "/tmp/perf-4242.map");  // as perf script prints it
  Frame g = sym.Symbolize(kPid, 10, 0x7f1000001090);
  EXPECT_EQ(g.symbol, "Builtin:ArrayPush");
  // In the anonymous mapping but not in the map: perf's dso name, no symbol.
  Frame h = sym.Symbolize(kPid, 10, 0x7f1000050000);
  EXPECT_FALSE(h.symbol.has_value());
  EXPECT_EQ(h.dso, "/tmp/perf-4242.map");
  // JIT code in no recorded mapping at all is still named by the map.
  Frame i = sym.Symbolize(kPid, 10, 0x7f2000000010);
  EXPECT_EQ(i.symbol, "Stub:OutsideAnyMapping");
  EXPECT_EQ(i.dso, "/tmp/perf-4242.map");
  SymbolizerStats stats = sym.stats();
  EXPECT_EQ(stats.perf_maps_loaded, 1u);
  EXPECT_EQ(stats.jit_frames, 3u);
}

// .NET: ReadyToRun code runs from the r-xp mapping of its assembly, a PE
// file; only the runtime's jitdump names it. JIT code the perf map names is
// still named by the map; a stub only the jitdump has is named by it.
TEST(SymbolizerTest, ReadyToRunFramesInAPeImageFromTheJitdump) {
  TempDir dir;
  const std::string dll = dir.path() + "/System.Private.CoreLib.dll";
  testing::WriteFile(dll, std::string("MZ\x90\0", 4) + std::string(4096, '\0'));
  testing::WriteFile(dir.path() + "/perf-4242.map", "7f2000001000 100 void [app] Program::Main()[QuickJitted]\n");
  testing::WriteFile(dir.path() + "/jit-4242.dump",
                     testing::JitDumpWriter(4242)
                         .Load(0x7f1000003000, 0x80, 1, "void* [System.Private.CoreLib] NativeMemory::Alloc(native uint)[PreJIT]")
                         .Load(0x7f2000001000, 0x100, 2, "void [app] Program::Main()[QuickJitted]")
                         .Load(0x7f2000009000, 0x18, 3, "stub Allocate<FixupPrecode>")
                         .bytes());
  SymbolizerOptions options = IsolatedOptions(dir);
  options.trace_path = dir.path() + "/perf.data";
  SymbolizerWithMaps sym(options);
  sym.maps().AddMapping(kPid, 0, 0x7f1000000000, 0x10000, 0x1000, dll, "");
  sym.maps().AddMapping(kPid, 0, 0x7f2000000000, 0x10000, 0, "//anon", "");
  Frame r2r = sym.Symbolize(kPid, 10, 0x7f1000003043);
  EXPECT_EQ(r2r.symbol, "void* [System.Private.CoreLib] NativeMemory::Alloc(native uint)[PreJIT]");
  EXPECT_EQ(r2r.offset, 0x43u);
  EXPECT_EQ(r2r.dso, dll);  // the assembly, as perf prints it
  Frame jit = sym.Symbolize(kPid, 10, 0x7f2000001010);
  EXPECT_EQ(jit.dso, "/tmp/perf-4242.map");
  Frame stub = sym.Symbolize(kPid, 10, 0x7f2000009008);
  EXPECT_EQ(stub.symbol, "stub Allocate<FixupPrecode>");
  EXPECT_EQ(stub.dso, "/tmp/jit-4242.dump");
  // In the assembly but in no method: its file, unnamed.
  Frame none = sym.Symbolize(kPid, 10, 0x7f1000008000);
  EXPECT_FALSE(none.symbol.has_value());
  EXPECT_EQ(none.dso, dll);
  const SymbolizerStats stats = sym.stats();
  EXPECT_EQ(stats.jitdumps_loaded, 1u);
  EXPECT_EQ(stats.jitdump_frames, 2u);
  EXPECT_EQ(stats.jit_frames, 1u);
  EXPECT_THAT(stats.pe_images, ::testing::ElementsAre(dll));  // a .NET assembly is not a missing DSO
  EXPECT_EQ(stats.dsos_missing, 0u);
  EXPECT_EQ(stats.elfs_bad, 0u);
}

// Another process's jitdump under this pid's name names nothing.
TEST(SymbolizerTest, AJitdumpOfAnotherProcessIsNotUsed) {
  TempDir dir;
  testing::WriteFile(dir.path() + "/jit-4242.dump",
                     testing::JitDumpWriter(999).Load(0x7f2000001000, 0x100, 1, "Foreign").bytes());
  SymbolizerOptions options = IsolatedOptions(dir);
  options.trace_path = dir.path() + "/perf.data";
  SymbolizerWithMaps sym(options);
  sym.maps().AddMapping(kPid, 0, 0x7f2000000000, 0x10000, 0, "//anon", "");
  ::testing::internal::CaptureStderr();
  Frame f = sym.Symbolize(kPid, 10, 0x7f2000001010);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(f.symbol.has_value());
  EXPECT_THAT(err, ::testing::HasSubstr("the jitdump of pid 999, not of pid 4242; not used to name frames"));
  EXPECT_EQ(sym.stats().jitdumps_loaded, 0u);
}

TEST(SymbolizerTest, JitFramesWithoutAnyMapping) {
  TempDir dir;
  testing::WriteFile(dir.path() + "/perf-4242.map", "1000 100 jitted\n");
  SymbolizerOptions options = IsolatedOptions(dir);
  options.trace_path = dir.path() + "/perf.data";
  SymbolizerWithMaps sym(options);
  Frame f = sym.Symbolize(kPid, 10, 0x1010);
  EXPECT_EQ(f.symbol, "jitted");
  EXPECT_EQ(f.dso, "/tmp/perf-4242.map");
  EXPECT_EQ(sym.stats().no_mapping, 0u);
}

TEST(SymbolizerTest, PerfMapDirIsSearchedAfterTraceDirAndTmp) {
  TempDir trace_dir, map_dir;
  // A pid above PID_MAX_LIMIT (4194304), so no real /tmp/perf-PID.map exists.
  const uint32_t pid = 4194304 + 1000 + static_cast<uint32_t>(getpid() % 1000);
  ASSERT_NE(access(absl::StrCat("/tmp/perf-", pid, ".map").c_str(), F_OK), 0);
  testing::WriteFile(absl::StrCat(map_dir.path(), "/perf-", pid, ".map"), "2000 100 from_dir\n");
  SymbolizerOptions options = IsolatedOptions(trace_dir);
  options.trace_path = trace_dir.path() + "/perf.data";
  options.perf_map_dir = map_dir.path();
  SymbolizerWithMaps sym(options);
  sym.maps().AddMapping(pid, 0, 0x2000, 0x1000, 0, "//anon", "");
  Frame f = sym.Symbolize(pid, 10, 0x2004);
  EXPECT_EQ(f.symbol, "from_dir");
  EXPECT_EQ(f.dso, absl::StrCat("/tmp/perf-", pid, ".map"));

  // /tmp comes before --perf-map-dir; beside the trace comes before /tmp.
  const std::string tmp_map = absl::StrCat("/tmp/perf-", pid, ".map");
  testing::WriteFile(tmp_map, "2000 100 from_tmp\n");
  {
    SymbolizerWithMaps s2(options);
    EXPECT_EQ(s2.Symbolize(pid, 10, 0x2004).symbol, "from_tmp");
  }
  testing::WriteFile(absl::StrCat(trace_dir.path(), "/perf-", pid, ".map"),
                     "2000 100 from_trace_dir\n");
  {
    SymbolizerWithMaps s3(options);
    EXPECT_EQ(s3.Symbolize(pid, 10, 0x2004).symbol, "from_trace_dir");
  }
  std::remove(tmp_map.c_str());
}

TEST(SymbolizerTest, MissingPerfMapIsLookedForOncePerProcess) {
  TempDir dir;
  SymbolizerOptions options = IsolatedOptions(dir);
  options.trace_path = dir.path() + "/perf.data";
  SymbolizerWithMaps sym(options);
  const uint32_t pid = 4194304 + 3000 + static_cast<uint32_t>(getpid() % 1000);
  sym.maps().AddMapping(pid, 0, 0x2000, 0x1000, 0, "//anon", "");
  sym.Symbolize(pid, 10, 0x2004);
  sym.Symbolize(pid, 10, 0x2008);
  EXPECT_EQ(sym.stats().perf_maps_missing, 1u);
  EXPECT_EQ(sym.stats().perf_maps_loaded, 0u);
}

TEST(SymbolizerTest, ForkAndExec) {
  TempDir dir;
  SymbolizerWithMaps sym(IsolatedOptions(dir));
  AddSelfMappings(&sym, kPid, /*time=*/100);
  const uint64_t addr = Addr("getpid");
  sym.maps().OnFork(kPid + 1, kPid, 200);
  Frame child = sym.Symbolize(kPid + 1, 250, addr);
  ASSERT_TRUE(child.symbol.has_value());
  EXPECT_EQ(Addr(child.symbol->c_str()), addr);
  sym.maps().OnExec(kPid + 1, 300);
  Frame after_exec = sym.Symbolize(kPid + 1, 350, addr);
  EXPECT_FALSE(after_exec.symbol.has_value());
  EXPECT_EQ(after_exec.dso, "");
  // Still answered for the time before the exec, and for the parent.
  EXPECT_EQ(sym.Symbolize(kPid + 1, 299, addr).symbol, child.symbol);
  EXPECT_EQ(sym.Symbolize(kPid, 350, addr).symbol, child.symbol);
}

}  // namespace
}  // namespace pageblame::symbols

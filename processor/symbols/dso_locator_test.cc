#include "processor/symbols/dso_locator.h"

#include <unistd.h>

#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "processor/base/shared_dir_for_test.h"
#include "processor/symbols/build_id.h"
#include "processor/symbols/test_util.h"

namespace pageblame::symbols {
namespace {

using testing::TempDir;
using testing::TestElf;
using testing::WriteTestElf;

const std::string kIdA(20, '\xaa');
const std::string kIdB(20, '\xbb');

// Options with the three search roots set and nothing beside a trace; set
// field by field (gcc warns on positional braces that leave beside_dir out).
DsoLocator::Options Roots(std::string symfs, std::string debug_dir, std::string system_debug_dir) {
  DsoLocator::Options o;
  o.symfs = std::move(symfs);
  o.debug_dir = std::move(debug_dir);
  o.system_debug_dir = std::move(system_debug_dir);
  return o;
}

std::string WriteElf(const std::string& path, const std::string& build_id) {
  TestElf spec;
  spec.build_id = build_id;
  spec.symbols = {{"f", 0x5100, 0x10}};
  EXPECT_TRUE(WriteTestElf(path, spec).ok()) << path;
  return path;
}

TEST(DsoLocatorTest, PathItselfWhenNoBuildIdKnown) {
  TempDir dir;
  std::string lib = WriteElf(dir.path() + "/lib/liba.so", kIdA);
  DsoLocator locator(Roots("", dir.path() + "/cache", ""));
  DsoLocation loc = locator.Locate(lib, "");
  EXPECT_EQ(loc.elf_path, lib);
  EXPECT_EQ(loc.build_id, kIdA);  // read from the file
  EXPECT_EQ(loc.debug_path, "");
}

TEST(DsoLocatorTest, PathChecksTheBuildId) {
  TempDir dir;
  std::string lib = WriteElf(dir.path() + "/lib/liba.so", kIdA);
  DsoLocator locator(Roots("", dir.path() + "/cache", ""));
  EXPECT_EQ(locator.Locate(lib, kIdA).elf_path, lib);
  // perf's 24-byte zero-padded form matches too.
  EXPECT_EQ(locator.Locate(lib, kIdA + std::string(4, '\0')).elf_path, lib);
  DsoLocation other = locator.Locate(lib, kIdB);
  EXPECT_EQ(other.elf_path, "");
  EXPECT_EQ(other.build_id_mismatches, 1);
}

TEST(DsoLocatorTest, DeletedSuffixIsIgnoredForLookup) {
  TempDir dir;
  std::string lib = WriteElf(dir.path() + "/liba.so", kIdA);
  DsoLocator locator(Roots("", "", ""));
  EXPECT_EQ(locator.Locate(lib + " (deleted)", kIdA).elf_path, lib);
}

TEST(DsoLocatorTest, SymfsPrefixesThePath) {
  TempDir dir;
  std::string in_symfs = WriteElf(dir.path() + "/root/usr/lib/liba.so", kIdA);
  DsoLocator locator(Roots(dir.path() + "/root", "", ""));
  EXPECT_EQ(locator.Locate("/usr/lib/liba.so", kIdA).elf_path, in_symfs);
  EXPECT_EQ(locator.Locate("/usr/lib/liba.so", "").elf_path, in_symfs);
  EXPECT_EQ(locator.Locate("/usr/lib/libmissing.so", "").elf_path, "");
}

TEST(DsoLocatorTest, BinariesBesideTheTraceAreFoundByTheirName) {
  TempDir dir;
  std::string beside = WriteElf(dir.path() + "/traces/liba.so", kIdA);
  DsoLocator::Options options;
  options.beside_dir = dir.path() + "/traces";
  DsoLocator locator(options);
  // Recorded elsewhere: found beside the trace, with or without a build id.
  EXPECT_EQ(locator.Locate("/build/out/liba.so", "").elf_path, beside);
  EXPECT_EQ(locator.Locate("/build/out/liba.so", kIdA).elf_path, beside);
  // Another build of the same name is not taken.
  EXPECT_EQ(locator.Locate("/build/out/liba.so", kIdB).elf_path, "");
  // The recorded path still comes first.
  std::string at_path = WriteElf(dir.path() + "/out/liba.so", kIdA);
  EXPECT_EQ(locator.Locate(at_path, "").elf_path, at_path);
  EXPECT_EQ(locator.Locate("[vdso]", "").elf_path, "");
}

// A trace kept in /tmp: a binary of the program's name beside it may be
// anyone's, and its symbols and CFI would decide the stacks.
TEST(DsoLocatorTest, BesideATraceInASharedDirectoryOnlyTrustedBinaries) {
  if (!IsRoot()) GTEST_SKIP() << "choosing a file's owner needs root";
  SharedDirForTest shared;
  const std::string beside = WriteElf(shared.path() + "/liba.so", kIdA);
  ASSERT_EQ(::chown(beside.c_str(), kNobody, kNobody), 0);
  DsoLocation refused = DsoLocator({"", "", "", shared.path()}).Locate("/build/out/liba.so", kIdA);
  EXPECT_EQ(refused.elf_path, "");
  EXPECT_EQ(refused.refused.rfind(beside + ": owned by nobody (uid 65534)", 0), 0u) << refused.refused;
  DsoLocator::Options force{"", "", "", shared.path()};
  force.force = true;
  EXPECT_EQ(DsoLocator(force).Locate("/build/out/liba.so", kIdA).elf_path, beside);
  ASSERT_EQ(::chown(beside.c_str(), 0, 0), 0);
  DsoLocation root = DsoLocator({"", "", "", shared.path()}).Locate("/build/out/liba.so", kIdA);
  EXPECT_EQ(root.elf_path, beside);
  EXPECT_EQ(root.refused, "");
}

TEST(DsoLocatorTest, BuildIdCacheLayouts) {
  TempDir dir;
  const std::string cache = dir.path() + "/debug";
  const std::string hex = BuildIdToHex(kIdA);
  // perf >= 4.x: .build-id/xx/rest is a directory (a symlink to
  // PATH/BUILDID/) holding "elf".
  std::string cached = WriteElf(cache + "/gone/liba.so/" + hex + "/elf", kIdA);
  testing::MakeSymlink("../../gone/liba.so/" + hex,
                       cache + "/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2));
  DsoLocator locator(Roots("", cache, ""));
  EXPECT_EQ(locator.Locate("/gone/liba.so", kIdA).elf_path,
            cache + "/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) + "/elf");
  // Without a build id the cache cannot be used.
  EXPECT_EQ(locator.Locate("/gone/liba.so", "").elf_path, "");

  // The older layout: the .build-id link is the file itself.
  const std::string hex_b = BuildIdToHex(kIdB);
  std::string old = WriteElf(dir.path() + "/old/libb.so", kIdB);
  testing::MakeSymlink(old, cache + "/.build-id/" + hex_b.substr(0, 2) + "/" + hex_b.substr(2));
  EXPECT_EQ(locator.Locate("/elsewhere/libb.so", kIdB).elf_path,
            DsoLocator::BuildIdLinkPath(cache, hex_b));
}

TEST(DsoLocatorTest, CacheByPathAndVdso) {
  TempDir dir;
  const std::string cache = dir.path() + "/debug";
  const std::string hex = BuildIdToHex(kIdA);
  std::string by_path = WriteElf(cache + "/gone/liba.so/" + hex + "/elf", kIdA);
  std::string vdso = WriteElf(cache + "/[vdso]/" + BuildIdToHex(kIdB) + "/vdso", kIdB);
  DsoLocator locator(Roots("", cache, ""));
  EXPECT_EQ(locator.Locate("/gone/liba.so", kIdA).elf_path, by_path);
  EXPECT_EQ(locator.Locate("[vdso]", kIdB).elf_path, vdso);
  EXPECT_EQ(locator.Locate("[vdso]", "").elf_path, "");
}

TEST(DsoLocatorTest, PathFirstThenCacheWhenThePathIsAnotherBuild) {
  TempDir dir;
  const std::string cache = dir.path() + "/debug";
  std::string lib = WriteElf(dir.path() + "/liba.so", kIdB);  // upgraded since recording
  std::string cached = WriteElf(cache + lib + "/" + BuildIdToHex(kIdA) + "/elf", kIdA);
  DsoLocator locator(Roots("", cache, ""));
  DsoLocation loc = locator.Locate(lib, kIdA);
  EXPECT_EQ(loc.elf_path, cached);
  EXPECT_EQ(loc.build_id_mismatches, 1);
  EXPECT_EQ(locator.Locate(lib, kIdB).elf_path, lib);
}

TEST(DsoLocatorTest, SeparateDebugFileByBuildId) {
  TempDir dir;
  const std::string hex = BuildIdToHex(kIdA);
  std::string lib = WriteElf(dir.path() + "/root/usr/lib/liba.so", kIdA);
  std::string debug = WriteElf(dir.path() + "/root/usr/lib/debug/.build-id/" + hex.substr(0, 2) +
                                   "/" + hex.substr(2) + ".debug",
                               kIdA);
  DsoLocator locator(Roots(dir.path() + "/root", "", ""));
  // Build id from the trace, or read from the binary when the trace has none.
  EXPECT_EQ(locator.Locate("/usr/lib/liba.so", kIdA).debug_path, debug);
  EXPECT_EQ(locator.Locate("/usr/lib/liba.so", "").debug_path, debug);
  // Even without the binary.
  DsoLocation only_debug = locator.Locate("/usr/lib/gone.so", kIdA);
  EXPECT_EQ(only_debug.elf_path, "");
  EXPECT_EQ(only_debug.debug_path, debug);
}

TEST(DsoLocatorTest, DebugFileOfAnotherBuildIsRejected) {
  TempDir dir;
  const std::string hex = BuildIdToHex(kIdA);
  std::string lib = WriteElf(dir.path() + "/liba.so", kIdA);
  // A stale debug file under the right name but with another build id.
  WriteElf(dir.path() + "/dbg/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) + ".debug",
           kIdB);
  DsoLocator locator(Roots("", "", dir.path() + "/dbg"));
  DsoLocation loc = locator.Locate(lib, kIdA);
  EXPECT_EQ(loc.elf_path, lib);
  EXPECT_EQ(loc.debug_path, "");
  EXPECT_EQ(loc.build_id_mismatches, 1);
}

TEST(DsoLocatorTest, NonFilesAreNotFound) {
  TempDir dir;
  DsoLocator locator(Roots("", dir.path(), ""));
  EXPECT_EQ(locator.Locate("//anon", "").elf_path, "");
  EXPECT_EQ(locator.Locate("[vsyscall]", "").elf_path, "");
  EXPECT_EQ(locator.Locate(dir.path(), "").elf_path, "");  // a directory
}

}  // namespace
}  // namespace pageblame::symbols

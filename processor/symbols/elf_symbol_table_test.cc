#include "processor/symbols/elf_symbol_table.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <climits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/symbols/build_id.h"
#include "processor/symbols/demangle.h"
#include "processor/symbols/dso_locator.h"
#include "processor/symbols/elf_handle.h"
#include "processor/symbols/test_util.h"

namespace pageblame::symbols {
namespace {

using testing::TempDir;
using testing::TestElf;
using testing::TestSymbol;
using testing::WriteTestElf;

// libc functions that are plain (not IFUNC) so dlsym() returns the code
// address itself.
constexpr const char* kLibcFunctions[] = {"mmap", "munmap", "getpid", "qsort", "malloc"};

struct LibcFunction {
  uint64_t addr = 0;
  uint64_t load_bias = 0;  // link_map::l_addr: runtime address - ELF vaddr
  std::string path;        // as the dynamic loader opened it
};

// libc's own definition, not an interposer's (ASan intercepts mmap, munmap...).
void* LibcSym(const char* name) {
  static void* const libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  return libc ? dlsym(libc, name) : nullptr;
}

LibcFunction Lookup(const char* name) {
  LibcFunction f;
  void* addr = LibcSym(name);
  EXPECT_NE(addr, nullptr) << name;
  Dl_info info;
  link_map* map = nullptr;
  EXPECT_NE(dladdr1(addr, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP), 0) << name;
  f.addr = reinterpret_cast<uint64_t>(addr);
  f.load_bias = map ? map->l_addr : 0;
  f.path = info.dli_fname ? info.dli_fname : "";
  return f;
}

std::string LibcPath() {
  char real[PATH_MAX];
  std::string path = Lookup("mmap").path;
  return realpath(path.c_str(), real) ? real : path;
}

TEST(ElfSymbolTableTest, NamesLibcFunctionsAtTheirAddresses) {
  auto table = ElfSymbolTable::Load(LibcPath());
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_GT((*table)->size(), 1000u);
  for (const char* name : kLibcFunctions) {
    SCOPED_TRACE(name);
    LibcFunction f = Lookup(name);
    std::optional<testing::SelfMapping> m = testing::SelfMappingFor(f.addr);
    ASSERT_TRUE(m.has_value());
    // ip -> file offset (as perf's map__map_ip) -> ELF vaddr via PT_LOAD.
    uint64_t file_offset = f.addr - m->start + m->pgoff;
    std::optional<uint64_t> vaddr = (*table)->FileOffsetToVaddr(file_offset);
    ASSERT_TRUE(vaddr.has_value());
    EXPECT_EQ(*vaddr, f.addr - f.load_bias);
    const ElfSymbolTable::Symbol* sym = (*table)->Find(*vaddr + 1);
    ASSERT_NE(sym, nullptr);
    EXPECT_EQ(sym->start, *vaddr);
    EXPECT_GT(sym->end, *vaddr + 1);
    // Whichever alias was chosen, it is a name for this very function.
    EXPECT_EQ(LibcSym(std::string(sym->name).c_str()), reinterpret_cast<void*>(f.addr))
        << sym->name;
  }
}

TEST(ElfSymbolTableTest, BuildIdMatchesTheNote) {
  auto table = ElfSymbolTable::Load(LibcPath());
  ASSERT_TRUE(table.ok());
  auto handle = ElfHandle::Open(LibcPath());
  ASSERT_TRUE(handle.ok());
  EXPECT_FALSE((*table)->build_id().empty());
  EXPECT_EQ((*table)->build_id(), handle->BuildId());
}

TEST(ElfSymbolTableTest, OwnBinaryHasDemangledCppSymbol) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  ASSERT_GT(n, 0);
  exe[n] = '\0';
  auto table = ElfSymbolTable::Load(exe);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_TRUE((*table)->has_symtab());
  uint64_t addr = reinterpret_cast<uint64_t>(&testing::MarkerFunction);
  std::optional<testing::SelfMapping> m = testing::SelfMappingFor(addr);
  ASSERT_TRUE(m.has_value());
  std::optional<uint64_t> vaddr = (*table)->FileOffsetToVaddr(addr - m->start + m->pgoff);
  ASSERT_TRUE(vaddr.has_value());
  const ElfSymbolTable::Symbol* sym = (*table)->Find(*vaddr + 2);
  ASSERT_NE(sym, nullptr);
  EXPECT_EQ(sym->start, *vaddr);
  EXPECT_EQ(Demangle(sym->name, /*params=*/true),
            "pageblame::symbols::testing::MarkerFunction(int)");
}

TEST(ElfSymbolTableTest, MissingAndNonElfFilesFail) {
  TempDir dir;
  EXPECT_EQ(ElfSymbolTable::Load(dir.path() + "/nope").status().code(),
            absl::StatusCode::kNotFound);
  testing::WriteFile(dir.path() + "/text", "not an elf file at all");
  EXPECT_EQ(ElfSymbolTable::Load(dir.path() + "/text").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ElfSymbolTableTest, SegmentMapsFileOffsetsToVaddrs) {
  TempDir dir;
  TestElf spec;
  spec.text_vaddr = 0x5000;  // != kTextOffset: the conversion must use p_offset/p_vaddr
  spec.symbols = {{"f", 0x5100, 0x40}};
  ASSERT_TRUE(WriteTestElf(dir.path() + "/a.so", spec).ok());
  auto table = ElfSymbolTable::Load(dir.path() + "/a.so");
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ((*table)->FileOffsetToVaddr(TestElf::kTextOffset), 0x5000u);
  EXPECT_EQ((*table)->FileOffsetToVaddr(TestElf::kTextOffset + 0x123), 0x5123u);
  EXPECT_EQ((*table)->FileOffsetToVaddr(TestElf::kTextOffset + 0xfff), 0x5fffu);
  EXPECT_FALSE((*table)->FileOffsetToVaddr(TestElf::kTextOffset + 0x1000 + 0x1000).has_value());
  EXPECT_FALSE((*table)->FileOffsetToVaddr(0x100000).has_value());
  EXPECT_FALSE((*table)->is_debug_only());
}

TEST(ElfSymbolTableTest, SizedAndZeroSizeSymbols) {
  TempDir dir;
  TestElf spec;
  spec.text_vaddr = 0x5000;
  spec.text_size = 0x1000;
  spec.symbols = {
      {"sized", 0x5100, 0x20},
      {"zero_a", 0x5200, 0},  // extends to next symbol (0x5300)
      {"next", 0x5300, 0x10},
      {"last_zero", 0x5800, 0},  // extends to the end of .text (0x6000)
      {"data_obj", 0x7000, 8, STT_OBJECT, STB_GLOBAL, TestSymbol::kDataSection},
      {"undef", 0, 0, STT_FUNC, STB_GLOBAL, SHN_UNDEF},
      {"abs", 0x5400, 0x10, STT_FUNC, STB_GLOBAL, SHN_ABS},
  };
  ASSERT_TRUE(WriteTestElf(dir.path() + "/a.so", spec).ok());
  auto loaded = ElfSymbolTable::Load(dir.path() + "/a.so");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const ElfSymbolTable& t = **loaded;
  auto name_at = [&](uint64_t vaddr) -> std::string {
    const ElfSymbolTable::Symbol* s = t.Find(vaddr);
    return s ? std::string(s->name) : "<none>";
  };
  EXPECT_EQ(name_at(0x50ff), "<none>");
  EXPECT_EQ(name_at(0x5100), "sized");
  EXPECT_EQ(name_at(0x511f), "sized");
  EXPECT_EQ(name_at(0x5120), "<none>");  // gap after a sized symbol
  EXPECT_EQ(name_at(0x5200), "zero_a");
  EXPECT_EQ(name_at(0x52ff), "zero_a");
  EXPECT_EQ(name_at(0x5300), "next");
  EXPECT_EQ(name_at(0x5310), "<none>");
  EXPECT_EQ(name_at(0x5405), "<none>");  // SHN_ABS is not code
  EXPECT_EQ(name_at(0x5800), "last_zero");
  EXPECT_EQ(name_at(0x5fff), "last_zero");
  EXPECT_EQ(name_at(0x6000), "<none>");
  EXPECT_EQ(name_at(0x7000), "<none>");  // objects are not functions
  EXPECT_EQ(name_at(0), "<none>");
  EXPECT_EQ(t.size(), 4u);
}

TEST(ElfSymbolTableTest, AliasesCollapseToPerfsChoice) {
  TempDir dir;
  TestElf spec;
  spec.symbols = {
      // Like libc's mmap: weak mmap/mmap64 and global __mmap at one address.
      {"mmap", 0x5100, 0x30, STT_FUNC, STB_WEAK},
      {"mmap64", 0x5100, 0x30, STT_FUNC, STB_WEAK},
      {"__mmap", 0x5100, 0x30, STT_FUNC, STB_GLOBAL},
      // Sized beats zero-size, whatever the binding.
      {"label", 0x5200, 0, STT_NOTYPE, STB_GLOBAL},
      {"local_fn", 0x5200, 0x10, STT_FUNC, STB_LOCAL},
      // Among equals, fewer leading underscores.
      {"__x", 0x5300, 0x10, STT_FUNC, STB_GLOBAL},
      {"x", 0x5300, 0x10, STT_FUNC, STB_GLOBAL},
  };
  ASSERT_TRUE(WriteTestElf(dir.path() + "/a.so", spec).ok());
  auto t = ElfSymbolTable::Load(dir.path() + "/a.so");
  ASSERT_TRUE(t.ok());
  ASSERT_NE((*t)->Find(0x5110), nullptr);
  EXPECT_EQ((*t)->Find(0x5110)->name, "__mmap");
  ASSERT_NE((*t)->Find(0x5205), nullptr);
  EXPECT_EQ((*t)->Find(0x5205)->name, "local_fn");
  ASSERT_NE((*t)->Find(0x5300), nullptr);
  EXPECT_EQ((*t)->Find(0x5300)->name, "x");
  EXPECT_EQ((*t)->size(), 3u);
}

// glibc's .symtab has "clock_nanosleep@GLIBC_2.2.5" and
// "clock_nanosleep@@GLIBC_2.17" at one address: equal by every rule, perf
// keeps the one that comes first in the table.
TEST(ElfSymbolTableTest, FullTieGoesToTheEarlierEntry) {
  for (bool reversed : {false, true}) {
    SCOPED_TRACE(reversed);
    TempDir dir;
    TestElf spec;
    TestSymbol a{"clock@GLIBC_2.2.5", 0x5100, 0x10};
    TestSymbol b{"clock@@GLIBC_2.17", 0x5100, 0x10};
    spec.symbols = reversed ? std::vector<TestSymbol>{b, a} : std::vector<TestSymbol>{a, b};
    ASSERT_TRUE(WriteTestElf(dir.path() + "/a.so", spec).ok());
    auto t = ElfSymbolTable::Load(dir.path() + "/a.so");
    ASSERT_TRUE(t.ok());
    ASSERT_NE((*t)->Find(0x5100), nullptr);
    EXPECT_EQ((*t)->Find(0x5100)->name, spec.symbols[0].name);
  }
}

TEST(ElfSymbolTableTest, LabelsOnlyInExecutableSections) {
  TempDir dir;
  TestElf spec;
  spec.symbols = {
      {"asm_entry", 0x5100, 0, STT_NOTYPE, STB_GLOBAL},
      {"data_label", 0x7010, 0, STT_NOTYPE, STB_GLOBAL, TestSymbol::kDataSection},
      {"$x", 0x5400, 0, STT_NOTYPE, STB_LOCAL},  // ARM mapping symbol
      {"ifunc", 0x5500, 0x10, STT_GNU_IFUNC, STB_GLOBAL},
  };
  ASSERT_TRUE(WriteTestElf(dir.path() + "/a.so", spec).ok());
  auto t = ElfSymbolTable::Load(dir.path() + "/a.so");
  ASSERT_TRUE(t.ok());
  ASSERT_NE((*t)->Find(0x5180), nullptr);
  EXPECT_EQ((*t)->Find(0x5180)->name, "asm_entry");  // extends to "ifunc" at 0x5500
  EXPECT_EQ((*t)->Find(0x54ff)->name, "asm_entry");
  EXPECT_EQ((*t)->Find(0x5500)->name, "ifunc");
  EXPECT_EQ((*t)->Find(0x7010), nullptr);
  EXPECT_EQ((*t)->size(), 2u);
}

TEST(ElfSymbolTableTest, DynsymAndSymtabMerge) {
  TempDir dir;
  TestElf binary;
  binary.dynsym = true;
  binary.build_id = std::string(20, '\x21');
  binary.symbols = {{"exported", 0x5100, 0x10}};
  TestElf debug = binary;
  debug.dynsym = false;
  debug.debug_only = true;
  debug.symbols = {{"exported", 0x5100, 0x10}, {"static_helper", 0x5200, 0x20, STT_FUNC, STB_LOCAL}};
  ASSERT_TRUE(WriteTestElf(dir.path() + "/bin", binary).ok());
  ASSERT_TRUE(WriteTestElf(dir.path() + "/bin.debug", debug).ok());
  auto b = ElfSymbolTable::Load(dir.path() + "/bin");
  auto d = ElfSymbolTable::Load(dir.path() + "/bin.debug");
  ASSERT_TRUE(b.ok() && d.ok());
  EXPECT_FALSE((*b)->has_symtab());
  EXPECT_EQ((*b)->Find(0x5210), nullptr);
  EXPECT_TRUE((*d)->is_debug_only());
  EXPECT_EQ((*b)->build_id(), binary.build_id);
  EXPECT_EQ((*d)->build_id(), binary.build_id);
  (*b)->MergeSymbolsFrom(**d);
  EXPECT_TRUE((*b)->has_symtab());
  EXPECT_EQ((*b)->size(), 2u);  // "exported" once
  ASSERT_NE((*b)->Find(0x5210), nullptr);
  EXPECT_EQ((*b)->Find(0x5210)->name, "static_helper");
  // The layout stays the binary's (the debug file's offsets are not real).
  EXPECT_EQ((*b)->FileOffsetToVaddr(TestElf::kTextOffset + 0x210), 0x5210u);
}

// libc6-dbg is not on every machine; when it is, its .symtab adds the local
// symbols libc.so.6 strips, and a debug file alone still maps offsets.
TEST(ElfSymbolTableTest, LibcWithSeparateDebugInfo) {
  auto table = ElfSymbolTable::Load(LibcPath());
  ASSERT_TRUE(table.ok());
  DsoLocator locator(DsoLocator::Options{});
  DsoLocation loc = locator.Locate(LibcPath(), (*table)->build_id());
  if (loc.debug_path.empty()) GTEST_SKIP() << "no debug file for libc installed";
  auto debug = ElfSymbolTable::Load(loc.debug_path);
  ASSERT_TRUE(debug.ok());
  EXPECT_TRUE((*debug)->is_debug_only());
  EXPECT_TRUE((*debug)->has_symtab());
  size_t before = (*table)->size();
  (*table)->MergeSymbolsFrom(**debug);
  EXPECT_GT((*table)->size(), before);
  for (const char* name : kLibcFunctions) {
    SCOPED_TRACE(name);
    LibcFunction f = Lookup(name);
    std::optional<testing::SelfMapping> m = testing::SelfMappingFor(f.addr);
    ASSERT_TRUE(m.has_value());
    uint64_t file_offset = f.addr - m->start + m->pgoff;
    EXPECT_EQ((*table)->FileOffsetToVaddr(file_offset), f.addr - f.load_bias);
    // Only a debug file: the guessed layout (offset == vaddr - first page)
    // holds for libc as Debian links it.
    EXPECT_EQ((*debug)->FileOffsetToVaddr(file_offset), f.addr - f.load_bias);
    const ElfSymbolTable::Symbol* sym = (*table)->Find(f.addr - f.load_bias);
    ASSERT_NE(sym, nullptr);
    EXPECT_EQ(sym->start, f.addr - f.load_bias);
  }
}

}  // namespace
}  // namespace pageblame::symbols

#include "processor/regions/core_file_parser.h"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/regions/core_builder_for_test.h"
#include "processor/regions/page_diff.h"
#include "processor/regions/region_table_reader.h"

namespace pageblame::regions {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kCores = std::string(PAGEBLAME_SOURCE_DIR) + "/traces/cores/";
constexpr uint64_t kBase = 0x7e5500000000;  // traces/src/coremaps.c

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string Message(const absl::StatusOr<RegionTable>& t) {
  return t.ok() ? "(ok)" : std::string(t.status().message());
}

// What gcore writes for a maps perm string "r-xp": it marks every segment
// readable (PF_R), PROT_NONE ones too.
std::string GcoreProtect(absl::string_view perms) {
  uint32_t f = PF_R | (perms[1] == 'w' ? PF_W : 0) | (perms[2] == 'x' ? PF_X : 0);
  return CoreFileParser::Protect(f);
}

// The row at `start` (rows are handed out by value: a copy).
std::optional<Region> At(const RegionTable& t, uint64_t start) {
  for (const Region& r : t.regions)
    if (r.start == start) return r;
  return std::nullopt;
}

// traces/cores/gcore-coremaps.core is gdb's gcore of traces/src/coremaps.c,
// taken when it saved gcore-coremaps.maps (traces/make-core.sh): the core's
// regions must be the maps file's rows, row for row, but for what gcore
// leaves out.
TEST(CoreFileParserTest, GcoreCoreMatchesTheMapsFileOfTheSameMoment) {
  absl::StatusOr<RegionTable> core = RegionTableReader::DetectAndParse(kCores + "gcore-coremaps.core");
  ASSERT_TRUE(core.ok()) << core.status();
  absl::StatusOr<RegionTable> maps = RegionTableReader::DetectAndParse(kCores + "gcore-coremaps.maps");
  ASSERT_TRUE(maps.ok()) << maps.status();
  EXPECT_EQ(core->format, "elf-core");
  EXPECT_TRUE(core->has_state);
  std::map<uint64_t, Region> rows;
  for (const Region& m : maps->regions) rows[m.start] = m;
  for (const Region& r : core->regions) {
    SCOPED_TRACE(absl::StrCat("core region 0x", absl::Hex(r.start), " line ", r.line));
    auto it = rows.find(r.start);
    ASSERT_NE(it, rows.end());
    const Region& m = it->second;
    EXPECT_EQ(r.end, m.end);
    bool file = absl::StartsWith(m.usage, "/");
    EXPECT_EQ(r.usage, file ? m.usage : "");
    EXPECT_EQ(r.type, file ? "MEM_MAPPED" : "MEM_PRIVATE");
    EXPECT_EQ(r.state, "MEM_COMMIT");
    if (r.protect.empty()) {
      // Left out of the PT_LOADs, named by NT_FILE: read-only file contents.
      EXPECT_TRUE(file);
      EXPECT_EQ(m.protect[1], '-') << m.protect;
    } else {
      // So a PROT_NONE reserve ("---p") looks committed in a gcore core
      // (PAGE_READONLY): see core_file_parser.h.
      EXPECT_EQ(r.protect, GcoreProtect(m.protect)) << m.protect;
    }
    rows.erase(it);
  }
  // What gcore leaves out altogether: the kernel's VM_IO/VM_DONTDUMP pages.
  for (const auto& [start, m] : rows) EXPECT_THAT(m.usage, StartsWith("[vvar")) << m.usage;
  EXPECT_EQ(rows.size(), 2u);

  // The program's own regions (fixed addresses in coremaps.c).
  std::optional<Region> anon = At(*core, kBase);
  ASSERT_TRUE(anon.has_value());
  EXPECT_EQ(anon->size(), 5 * 4096u);
  EXPECT_EQ(anon->protect, "PAGE_READWRITE");
  EXPECT_EQ(At(*core, kBase + 0x202000)->protect, "PAGE_READWRITE");  // committed middle
  EXPECT_EQ(At(*core, kBase + 0x500000)->protect, "PAGE_EXECUTE_READWRITE");
  std::optional<Region> shared = At(*core, kBase + 0x300000);  // r--s file: NT_FILE only
  ASSERT_TRUE(shared.has_value());
  EXPECT_THAT(shared->usage, testing::EndsWith("/coremaps.data"));
  EXPECT_EQ(shared->protect, "");
  std::optional<Region> priv = At(*core, kBase + 0x400000);  // rw-p file, written: a PT_LOAD
  ASSERT_TRUE(priv.has_value());
  EXPECT_THAT(priv->usage, testing::EndsWith("/coremaps.data"));
  EXPECT_EQ(priv->protect, "PAGE_READWRITE");
}

// traces/cores/dotnet-dump-heap.core: `dotnet-dump collect --type Heap` of
// traces/src/dotnet-coremaps (the runtime's createdump writes it), and the
// maps file saved right after (traces/make-dotnet-core.sh).
TEST(CoreFileParserTest, DotnetDumpCoreLiesInsideItsMaps) {
  absl::StatusOr<RegionTable> core = RegionTableReader::DetectAndParse(kCores + "dotnet-dump-heap.core");
  ASSERT_TRUE(core.ok()) << core.status();
  absl::StatusOr<RegionTable> maps = RegionTableReader::DetectAndParse(kCores + "dotnet-dump-heap.maps");
  ASSERT_TRUE(maps.ok()) << maps.status();
  ASSERT_EQ(core->skipped, 1);  // its data was kept by trim_core.py --keep-data
  EXPECT_THAT(core->skip_reasons[0], HasSubstr("createdump's diagnostics info page"));
  // Every committed byte of the core is mapped in the maps file.
  EXPECT_EQ(Diff(*core, *maps).unaccounted.bytes, 0u);
  // What the core does not have: createdump leaves out memory without access
  // (which the maps' "---p" rows list as reserved, not committed: in no diff)
  // and the kernel's pages, and a heap dump some of the JIT's double-mapped code.
  DiffResult back = Diff(*maps, *core);
  for (const Region& p : back.unaccounted.pieces) {
    EXPECT_NE(p.protect.substr(0, 3), "---") << absl::StrCat("at 0x", absl::Hex(p.start));
    bool kernel = p.usage == "[vvar]" || p.usage == "[vvar_vclock]" || p.usage == "[vsyscall]";
    EXPECT_TRUE(kernel || absl::StartsWith(p.usage, "/memfd:doublemapper"))
        << p.protect << " " << p.usage << absl::StrCat(" at 0x", absl::Hex(p.start));
  }
  // No reserves; each segment's protection is its maps row's r/w/x.
  int named = 0;
  for (const Region& r : core->regions) {
    SCOPED_TRACE(absl::StrCat("core region 0x", absl::Hex(r.start)));
    EXPECT_EQ(r.state, "MEM_COMMIT");
    named += absl::EndsWith(r.usage, "/System.Private.CoreLib.dll") ||
             absl::EndsWith(r.usage, "/libcoreclr.so");
    if (r.protect.empty()) continue;  // a file range in NT_FILE only
    std::optional<Region> row;
    for (const Region& m : maps->regions)
      if (m.start <= r.start && r.start < m.end) row = m;
    ASSERT_TRUE(row.has_value());
    uint32_t f = (row->protect[0] == 'r' ? PF_R : 0) | (row->protect[1] == 'w' ? PF_W : 0) |
                 (row->protect[2] == 'x' ? PF_X : 0);
    EXPECT_EQ(r.protect, CoreFileParser::Protect(f)) << row->protect;
  }
  EXPECT_GT(named, 2);
}

TEST(CoreFileParserTest, EveryCutOfTheCoreIsAnErrorNotACrash) {
  // The trimmed core ends with its notes: any shorter prefix loses some.
  std::string core = ReadFile(kCores + "gcore-coremaps.core");
  ASSERT_GT(core.size(), 4000u);
  int cuts = 0;
  for (size_t n = 4; n < core.size(); n += n < 2000 ? 1 : 61, ++cuts) {
    absl::StatusOr<RegionTable> t = CoreFileParser::ParseBytes(core.substr(0, n), "cut.core");
    ASSERT_FALSE(t.ok()) << n;
    EXPECT_THAT(Message(t), StartsWith("cut.core: ")) << n;
    EXPECT_THAT(Message(t), HasSubstr("truncated core")) << n;
  }
  EXPECT_GT(cuts, 2000);
  // The same through a file descriptor (pread, as for a core of many GB).
  std::string path = ::testing::TempDir() + "/cut-" + std::to_string(getpid()) + ".core";
  std::ofstream(path, std::ios::binary) << core.substr(0, 1000);
  int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  absl::StatusOr<RegionTable> t = CoreFileParser::ParseFile(fd, 1000, path);
  ::close(fd);
  std::remove(path.c_str());
  EXPECT_THAT(Message(t), HasSubstr("truncated core: the file (1000 bytes) ends before the end of "
                                    "its 24 program headers (1344 bytes at offset 64)"));
}

TEST(CoreFileParserTest, CorruptBytesAnywhereNeverCrash) {
  // Every byte of both cores' headers and notes set to 0x00, 0xFF and 0x80 in
  // turn: each parse ends in a table or an error naming the file (ASan and
  // UBSan builds check the reads).
  for (const char* name : {"gcore-coremaps.core", "dotnet-dump-heap.core"}) {
    std::string core = ReadFile(kCores + name);
    ASSERT_GT(core.size(), 4000u);
    int errors = 0;
    for (size_t i = 0; i < core.size(); i += i < 1500 ? 1 : 7) {
      for (char v : {'\x00', '\xFF', '\x80'}) {
        std::string bad = core;
        bad[i] = v;
        absl::StatusOr<RegionTable> t = CoreFileParser::ParseBytes(std::move(bad), "bad.core");
        if (!t.ok()) {
          ++errors;
          EXPECT_THAT(Message(t), StartsWith("bad.core: ")) << name << " byte " << i;
        }
      }
    }
    EXPECT_GT(errors, 100) << name;
  }
}

TEST(CoreFileParserTest, StatesProtectsAndFileNames) {
  CoreBuilder b;
  b.AddLoad(0x10000, 0x4000, PF_R | PF_W);  // cut by the file mapping inside it
  b.AddLoad(0x20000, 0x8000, 0);            // PROT_NONE: a reserve
  b.AddLoad(0x30000, 0x1000, PF_R | PF_X);
  b.AddNote("CORE", NtFileNote::kType,
            b.NtFile({{0x11000, 0x12000, 0}, {0x30000, 0x31000, 0}, {0x40000, 0x42000, 1}},
                     {"/data/x", "/lib/y.so", "/lib/z.so"}));
  absl::StatusOr<RegionTable> t = CoreFileParser::ParseBytes(b.Build(), "s.core");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->regions.size(), 6u);
  const Region& head = t->regions[0];
  EXPECT_EQ(head.end, 0x11000u);
  EXPECT_EQ(head.type, "MEM_PRIVATE");
  EXPECT_EQ(head.state, "MEM_COMMIT");
  EXPECT_EQ(head.protect, "PAGE_READWRITE");
  EXPECT_EQ(head.line, 2);  // program header 1 is the PT_NOTE
  EXPECT_EQ(t->regions[1].usage, "/data/x");
  EXPECT_EQ(t->regions[1].type, "MEM_MAPPED");
  EXPECT_EQ(t->regions[2].start, 0x12000u);
  EXPECT_EQ(t->regions[2].usage, "");
  EXPECT_EQ(t->regions[3].state, "MEM_RESERVE");
  EXPECT_EQ(t->regions[3].protect, "PAGE_NOACCESS");
  EXPECT_FALSE(t->IsCommitted(t->regions[3]));
  EXPECT_TRUE(t->IsClaimed(t->regions[3]));
  EXPECT_EQ(t->regions[4].protect, "PAGE_EXECUTE_READ");
  EXPECT_EQ(t->regions[4].usage, "/lib/y.so");
  // In NT_FILE only: mapped, contents not in the core.
  const Region& file_only = t->regions[5];
  EXPECT_EQ(file_only.start, 0x40000u);
  EXPECT_EQ(file_only.end, 0x42000u);
  EXPECT_EQ(file_only.state, "MEM_COMMIT");
  EXPECT_EQ(file_only.protect, "");
  EXPECT_EQ(file_only.line, 4 + 3);  // 4 program headers, NT_FILE entry 3
}

TEST(CoreFileParserTest, ThirtyTwoBitBigEndianAndManyProgramHeaders) {
  CoreBuilder be(/*is64=*/false, /*big_endian=*/true);
  be.AddLoad(0x8000, 0x2000, PF_R);
  be.AddNote("CORE", NtFileNote::kType, be.NtFile({{0x8000, 0x9000, 0}}, {"/lib/a.so"}));
  absl::StatusOr<RegionTable> t = CoreFileParser::ParseBytes(be.Build(), "be.core");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->regions.size(), 2u);
  EXPECT_EQ(t->regions[0].usage, "/lib/a.so");
  EXPECT_EQ(t->regions[1].start, 0x9000u);
  // PN_XNUM: the count lives in section header 0 (createdump, > 65534 segments).
  CoreBuilder x;
  x.xnum = true;
  for (uint64_t i = 0; i < 3; ++i) x.AddLoad(0x100000 + i * 0x10000, 0x1000, PF_R | PF_W);
  t = CoreFileParser::ParseBytes(x.Build(), "x.core");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->regions.size(), 3u);
}

TEST(CoreFileParserTest, SegmentDataNeedNotBeInTheFile) {
  CoreBuilder b;
  b.AddLoad(0x10000, 0x4000, PF_R | PF_W, /*filesz=*/0x4000);  // data past the end
  b.data_bytes = 0x100;
  absl::StatusOr<RegionTable> t = CoreFileParser::ParseBytes(b.Build(), "short.core");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->regions[0].size(), 0x4000u);
}

TEST(CoreFileParserTest, CreatedumpDiagnosticsPageIsNotMemory) {
  CoreBuilder b;
  b.AddLoad(0x7ffffff10000, 0x1000, PF_R, /*filesz=*/0x1000);
  b.AddLoad(0x10000, 0x1000, PF_R | PF_W);
  std::string core = b.Build();
  std::string with_header = core + "DIAGINFOHEADER" + std::string(0x1000 - 14, '\0');
  absl::StatusOr<RegionTable> t = CoreFileParser::ParseBytes(with_header, "d.core");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->regions.size(), 1u);
  EXPECT_EQ(t->regions[0].start, 0x10000u);
  EXPECT_EQ(t->skipped, 1);
  EXPECT_THAT(t->skip_reasons[0], HasSubstr("createdump's diagnostics info page"));
  // Without the signature (or without the data) it is a page like any other.
  t = CoreFileParser::ParseBytes(core + std::string(0x1000, 'x'), "d.core");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->regions.size(), 2u);
  t = CoreFileParser::ParseBytes(core, "d.core");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->regions.size(), 2u);
}

TEST(CoreFileParserTest, CorruptHeadersAreErrorsThatSayWhat) {
  auto parse = [](const CoreBuilder& b) { return Message(CoreFileParser::ParseBytes(b.Build(), "c.core")); };
  CoreBuilder exe;
  exe.e_type = ET_DYN;
  exe.AddLoad(0x1000, 0x1000, PF_R);
  EXPECT_THAT(parse(exe), HasSubstr("c.core: an ELF file of type ET_DYN (a shared library or PIE "
                                    "executable), not a core dump (ET_CORE)"));
  CoreBuilder entsize;
  entsize.phentsize_delta = 8;
  entsize.AddLoad(0x1000, 0x1000, PF_R);
  EXPECT_THAT(parse(entsize), HasSubstr("program header entries of 64 bytes, expected 56"));
  CoreBuilder filesz;
  filesz.AddLoad(0x1000, 0x1000, PF_R, /*filesz=*/0x2000);
  EXPECT_THAT(parse(filesz), HasSubstr("more bytes in the file (8192) than in memory (4096)"));
  CoreBuilder wraps;
  wraps.AddLoad(0xfffffffffffff000, 0x2000, PF_R);
  EXPECT_THAT(parse(wraps), HasSubstr("runs past 2^64"));
  CoreBuilder notes;
  notes.AddRaw({PT_NOTE, 0, /*offset=*/0x100, 0, /*filesz=*/0x10000, 0});
  EXPECT_THAT(parse(notes), HasSubstr("truncated core: the file"));
  EXPECT_THAT(parse(notes), HasSubstr("ends before the end of its notes (PT_NOTE) (65536 bytes at offset 256)"));
  CoreBuilder nt_file;
  nt_file.AddLoad(0x1000, 0x1000, PF_R);
  std::string d = nt_file.NtFile({{0x1000, 0x2000, 0}}, {"/a"});
  d[0] = 9;
  nt_file.AddNote("CORE", NtFileNote::kType, d);
  EXPECT_THAT(parse(nt_file), HasSubstr("c.core: NT_FILE note: count 9"));
  CoreBuilder empty;
  EXPECT_THAT(parse(empty), HasSubstr("a core file with no memory"));
  CoreBuilder zero;
  zero.AddLoad(0x1000, 0, PF_R);
  zero.AddLoad(0x2000, 0x1000, PF_R);
  absl::StatusOr<RegionTable> z = CoreFileParser::ParseBytes(zero.Build(), "z.core");
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(z->skipped, 1);
}

// The fuzz campaign's cases: an NT_FILE entry [0, 2^64 - 1) made `diff` say
// "unaccounted: 16.0 EiB", not a whole number of pages; PT_LOADs with
// unaligned vaddrs made 3-byte pieces. Both are refused, by entry.
TEST(CoreFileParserTest, ImpossibleAddressesAreRefusedByEntry) {
  auto parse = [](const CoreBuilder& b) {
    return Message(CoreFileParser::ParseBytes(b.Build(), "c.core"));
  };
  CoreBuilder whole;
  whole.AddLoad(0x1000, 0x1000, PF_R);
  whole.AddNote("CORE", NtFileNote::kType,
                whole.NtFile({{0x1000, 0x2000, 0}, {0, 0xffffffffffffffff, 0}}, {"/a", "/b"}));
  EXPECT_THAT(parse(whole), HasSubstr("c.core: NT_FILE entry 2 (/b) [0x0, 0xffffffffffffffff) is "
                                      "not page-aligned"));
  CoreBuilder kernel;
  kernel.AddLoad(0x1000, 0x1000, PF_R);
  kernel.AddNote("CORE", NtFileNote::kType,
                 kernel.NtFile({{0xffff800000000000, 0xffff800000001000, 0}}, {"/k"}));
  EXPECT_THAT(parse(kernel), HasSubstr("NT_FILE entry 1 (/k) [0xffff800000000000, "
                                       "0xffff800000001000) ends past the user address range "
                                       "(0x800000000000)"));
  CoreBuilder unaligned;
  unaligned.AddLoad(0x1000, 0x1000, PF_R);
  unaligned.AddLoad(0x3003, 0x3, PF_R);
  EXPECT_THAT(parse(unaligned), HasSubstr("c.core: PT_LOAD (program header 3) [0x3003, 0x3006) "
                                          "is not page-aligned"));
  CoreBuilder overlap;
  overlap.AddLoad(0x4000, 0x2000, PF_R);
  overlap.AddLoad(0x5000, 0x1000, PF_R);
  EXPECT_THAT(parse(overlap), HasSubstr("PT_LOAD (program header 2) [0x4000, 0x6000) and PT_LOAD "
                                        "(program header 3) [0x5000, 0x6000) overlap"));
  CoreBuilder files;
  files.AddLoad(0x1000, 0x1000, PF_R);
  files.AddNote("CORE", NtFileNote::kType,
                files.NtFile({{0x8000, 0xa000, 0}, {0x9000, 0xb000, 0}}, {"/a", "/b"}));
  EXPECT_THAT(parse(files), HasSubstr("NT_FILE entry 1 (/a) [0x8000, 0xa000) and NT_FILE entry 2"));
  // 32-bit cores end at 4 GiB by their word size; the check holds there too.
  CoreBuilder small(/*is64=*/false);
  small.AddLoad(0x8001, 0x1000, PF_R);
  EXPECT_THAT(parse(small), HasSubstr("is not page-aligned"));
}

// x86-64's [vsyscall] page is in kernel and gcore cores, far above user
// space: it stays a region.
TEST(CoreFileParserTest, TheVsyscallPageIsKept) {
  CoreBuilder b;
  b.AddLoad(0x1000, 0x1000, PF_R);
  b.AddLoad(0xffffffffff600000, 0x1000, PF_R | PF_X);
  absl::StatusOr<RegionTable> t = CoreFileParser::ParseBytes(b.Build(), "v.core");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->regions.back().start, 0xffffffffff600000u);
  b.AddLoad(0xffffffffff601000, 0x1000, PF_R);  // but nothing else up there
  EXPECT_THAT(Message(CoreFileParser::ParseBytes(b.Build(), "v.core")),
              HasSubstr("past the user address range"));
}

// Found by the core_file fuzzer: the [vsyscall] page was left out of the
// overlap check with its range check, so a core listing it twice gave two
// regions at one address.
TEST(CoreFileParserTest, TheVsyscallPageTwiceOverlaps) {
  CoreBuilder b;
  b.AddLoad(0x1000, 0x1000, PF_R);
  b.AddLoad(0xffffffffff600000, 0x1000, PF_R | PF_X);
  b.AddLoad(0xffffffffff600000, 0x1000, PF_R);
  EXPECT_THAT(Message(CoreFileParser::ParseBytes(b.Build(), "v.core")),
              HasSubstr("PT_LOAD (program header 3) [0xffffffffff600000, 0xffffffffff601000) and "
                        "PT_LOAD (program header 4) [0xffffffffff600000, 0xffffffffff601000) overlap"));
}

TEST(CoreFileParserTest, OtherElfFilesAreNamedForWhatTheyAre) {
  absl::StatusOr<RegionTable> t =
      RegionTableReader::DetectAndParse(std::string(PAGEBLAME_SOURCE_DIR) + "/traces/bin/rules");
  EXPECT_THAT(Message(t), HasSubstr("traces/bin/rules: an ELF file of type ET_DYN"));
  t = CoreFileParser::ParseBytes(std::string("\x7f" "ELF\x02\x01", 6), "odd.core");
  EXPECT_THAT(Message(t), HasSubstr("odd.core: truncated core: 6 bytes"));  // shorter than e_ident
  t = CoreFileParser::ParseBytes(std::string("\x7f" "ELF\x02\x01\x01") + std::string(57, '\0'), "e.core");
  EXPECT_THAT(Message(t), HasSubstr("e.core: an ELF file of type ET_NONE"));
  t = CoreFileParser::ParseBytes(std::string("\x7f" "ELF\x03\x01\x01") + std::string(9, '\0'), "c3.core");
  EXPECT_THAT(Message(t), HasSubstr("unknown class 3"));
  t = CoreFileParser::ParseBytes(std::string("\x7f" "ELF\x02\x01\x00") + std::string(57, '\0'), "v0.core");
  EXPECT_THAT(Message(t), HasSubstr("unknown version 0"));
}

}  // namespace
}  // namespace pageblame::regions

#include "processor/regions/region_table_reader.h"

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pageblame::regions {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

RegionFormat DetectOrDie(const std::string& text, int* line = nullptr) {
  absl::StatusOr<RegionFormat> f = RegionTableReader::Detect(TextLines("t", text), line);
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? *f : RegionFormat::kRangeList;
}

TEST(RegionTableReaderTest, DetectsByContent) {
  int line = 0;
  EXPECT_EQ(DetectOrDie("0:000> !address\n\n  BaseAddress EndAddress+1 RegionSize Type State "
                        "Protect Usage\n",
                        &line),
            RegionFormat::kWindbgAddress);
  EXPECT_EQ(line, 3);  // the prompt matched nothing
  EXPECT_EQ(DetectOrDie("+ 7d18`98000000 7d18`98001000 0`00001000 MEM_PRIVATE MEM_COMMIT\n"),
            RegionFormat::kWindbgAddress);
  EXPECT_EQ(DetectOrDie(" +-----+\n | Memory Kind | StartAddr | EndAddr-1 | Size |\n", &line),
            RegionFormat::kSosMaddress);
  EXPECT_EQ(line, 2);
  EXPECT_EQ(DetectOrDie("Memory regions found by sos maddress command: 3469\n"),
            RegionFormat::kPageDiff);
  EXPECT_EQ(DetectOrDie("78e13f400000 - 78e145b1b000 Size: 103MB Type: X\n"),
            RegionFormat::kPageDiff);
  EXPECT_EQ(DetectOrDie("5159:   dotnet x.dll\n         Address Perm   Offset Device  Inode "
                        "Size\n",
                        &line),
            RegionFormat::kPmap);
  EXPECT_EQ(line, 2);
  EXPECT_EQ(DetectOrDie("5159:   dotnet x.dll\n5585e95a2000 r--p 00000000  08:01  915517  48 "
                        "4 4 rd dotnet\n"),
            RegionFormat::kPmap);
  EXPECT_EQ(DetectOrDie("55d7d2a69000-55d7d2a98000 r--p 00000000 fe:00 247101  /usr/bin/bash\n"),
            RegionFormat::kProcMaps);
  EXPECT_EQ(DetectOrDie("# watch\n0x1000-0x2000\n", &line), RegionFormat::kRangeList);
  EXPECT_EQ(line, 2);
  EXPECT_EQ(DetectOrDie("7d18`98000000\n"), RegionFormat::kRangeList);
}

TEST(RegionTableReaderTest, PeerSamplesDetectTheirFormats) {
  struct {
    const char* file;
    const char* format;
  } samples[] = {{"windbg-address.output", "windbg-address"},
                 {"sos-maddress.output", "sos-maddress"},
                 {"sos-eeheap-regions.output", "sos-eeheap"},
                 {"sos-eeheap-server.output", "sos-eeheap"},
                 {"sos-eeheap-segments.output", "sos-eeheap"},
                 {"pmap-XX.output", "pmap"}};
  for (const auto& s : samples) {
    absl::StatusOr<RegionTable> t = RegionTableReader::DetectAndParse(
        absl::StrCat(PAGEBLAME_SOURCE_DIR, "/processor/regions/testdata/", s.file));
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->format, s.format);
  }
}

TEST(RegionTableReaderTest, WholeFileErrors) {
  absl::StatusOr<RegionTable> t = RegionTableReader::ParseString("", "empty.txt");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), "empty.txt: empty file, no regions");
  t = RegionTableReader::ParseString("\n  \r\n\n", "blank.txt");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), StartsWith("blank.txt: empty file"));
  t = RegionTableReader::ParseString(std::string("PERFILE2\0\0\0", 11), "perf.data");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), StartsWith("perf.data: binary file"));
  t = RegionTableReader::ParseString("hello world\nthis is not a table\n", "notes.txt");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), StartsWith("notes.txt: not a recognized region table"));
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("line 1 is 'hello world'"));
  t = RegionTableReader::DetectAndParse("/nonexistent/address.output");
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(absl::IsNotFound(t.status()));
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("/nonexistent/address.output"));
}

TEST(RegionTableReaderTest, DotnetDumpMaddressRefusalSaysWhy) {
  // traces/dotnet/dotnet-leak.*.maddress.txt: what `dotnet-dump analyze CORE
  // -c maddress -c exit` (dotnet-dump 10.0.750501) wrote on Linux, first lines.
  absl::StatusOr<RegionTable> t = RegionTableReader::ParseString(
      "Loading core dump: /tmp/record-dotnet.YbqJcJ/dotnet-leak.23474.core ...\n"
      "The memory region service does not exists. This command is only supported under "
      "windbg/cdb debuggers.\n"
      "$ dotnet-dump analyze CORE -c \"maddress -summary\"\n",
      "maddress.txt");
  ASSERT_FALSE(t.ok());
  std::string m(t.status().message());
  EXPECT_THAT(m, StartsWith("maddress.txt:2: SOS maddress did not run here ('The memory region "
                            "service does not exists."));
  EXPECT_THAT(m, HasSubstr("maddress needs WinDbg or cdb"));
  EXPECT_THAT(m, HasSubstr("pageblame dotnet-regions DUMP"));
  // A real table that merely mentions the phrase later is still a table.
  EXPECT_EQ(DetectOrDie("0x1000-0x2000\n# The memory region service does not exists.\n"),
            RegionFormat::kRangeList);
}

TEST(RegionTableReaderTest, ErrorsAfterDetectionNameFileAndLine) {
  // Detected as a WinDbg table by its header; the row on line 3 is cut short.
  absl::StatusOr<RegionTable> t = RegionTableReader::ParseString(
      "  BaseAddress EndAddress+1 RegionSize Type State Protect Usage\n---\n"
      "+     7d18`98000000     7d18`98\n",
      "windbg-address.output");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()),
              StartsWith("windbg-address.output:3: expected 'BaseAddress EndAddress+1 "
                         "RegionSize Type State Protect Usage', got '+     7d18`98000000     "
                         "7d18`98'"));
}

std::string Sample(const std::string& name) {
  return absl::StrCat(PAGEBLAME_SOURCE_DIR, "/processor/regions/testdata/", name);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// UTF-8 (ASCII) text as UTF-16 with a byte-order mark.
std::string Utf16(const std::string& ascii, bool big_endian) {
  std::string out = big_endian ? "\xFE\xFF" : "\xFF\xFE";
  for (char c : ascii) out += big_endian ? std::string{'\0', c} : std::string{c, '\0'};
  return out;
}

TEST(RegionTableReaderTest, Utf16AndUtf8WithMarkReadAsTheSameTable) {
  // WinDbg output saved by PowerShell is UTF-16LE with a mark: the peer
  // sample in each encoding gives the same regions, lines and columns.
  std::string text = ReadFile(Sample("windbg-address.output"));
  absl::StatusOr<RegionTable> plain = RegionTableReader::ParseString(text, "a");
  ASSERT_TRUE(plain.ok()) << plain.status();
  for (const std::string& encoded :
       {Utf16(text, false), Utf16(text, true), "\xEF\xBB\xBF" + text}) {
    absl::StatusOr<RegionTable> t = RegionTableReader::ParseString(encoded, "a");
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->format, "windbg-address");
    ASSERT_EQ(t->regions.size(), plain->regions.size());
    for (size_t i = 0; i < t->regions.size(); ++i) {
      EXPECT_EQ(t->regions[i].start, plain->regions[i].start);
      EXPECT_EQ(t->regions[i].end, plain->regions[i].end);
      EXPECT_EQ(t->regions[i].line, plain->regions[i].line);
      EXPECT_EQ(t->regions[i].usage, plain->regions[i].usage);
    }
  }
  // Every format goes through the same decoding.
  absl::StatusOr<RegionTable> list = RegionTableReader::ParseString(Utf16("0x1000-0x3000\r\n", false), "l");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->regions[0].size(), 0x2000u);
}

TEST(RegionTableReaderTest, Utf16WithoutMarkIsBinaryWithAHint) {
  std::string le = Utf16("  BaseAddress EndAddress+1 RegionSize\n", false).substr(2);
  absl::StatusOr<RegionTable> t = RegionTableReader::ParseString(le, "w.txt");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), StartsWith("w.txt: binary file, not a region table"));
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("iconv -f UTF-16LE -t UTF-8"));
}

TEST(RegionTableReaderTest, DirectoryIsNamedAsOne) {
  absl::StatusOr<RegionTable> t = RegionTableReader::DetectAndParse(PAGEBLAME_SOURCE_DIR);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), absl::StrCat(PAGEBLAME_SOURCE_DIR, ": is a directory, not a region table"));
}

TEST(RegionTableReaderTest, ReversedRangeIsReportedOnItsLine) {
  for (const char* text : {"0x3000-0x1000\n", "# list\n0x1000-0x2000\n0x3000-0x1000\n"}) {
    absl::StatusOr<RegionTable> t = RegionTableReader::ParseString(text, "r.txt");
    ASSERT_FALSE(t.ok()) << text;
    EXPECT_THAT(std::string(t.status().message()),
                testing::MatchesRegex("r.txt:[13]: END must be above START .*'0x3000-0x1000'"));
  }
  absl::StatusOr<RegionTable> t = RegionTableReader::ParseString("0x2000 0x2000\n", "r.txt");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), StartsWith("r.txt:1: END must be above START"));
}

TEST(RegionTableReaderTest, UnrecognizedTableShowsTheClosestParsersReason) {
  // A maps line with a bad perm field matches no signature; the maps parser
  // still says exactly what is wrong with it.
  absl::StatusOr<RegionTable> t = RegionTableReader::ParseString(
      "my notes\n7f0000-7f1000 rwzp 00000000 fe:00 1 /x\n", "m.txt");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()),
              StartsWith("m.txt:2: expected 'START-END PERMS OFFSET MAJ:MIN INODE [PATH]', got "
                         "'7f0000-7f1000 rwzp 00000000 fe:00 1 /x' (the closest format, maps"));
  // WinDbg rows cut short, without a header: the WinDbg parser's reason.
  t = RegionTableReader::ParseString("+ 7d18`98000000 7d18`98001000\n", "w.txt");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), StartsWith("w.txt:1: expected 'BaseAddress"));
  EXPECT_EQ(TextLines::ErrorLine(t.status()), 0);  // the reader's own status, not the parser's
}

TEST(RegionTableReaderTest, ElfCoreInAStringIsReadAsACore) {
  std::string core = ReadFile(absl::StrCat(PAGEBLAME_SOURCE_DIR, "/traces/cores/gcore-coremaps.core"));
  absl::StatusOr<RegionTable> t = RegionTableReader::ParseString(core, "c");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->format, "elf-core");
}

TEST(RegionTableReaderTest, ParseAsOverridesDetection) {
  // "1000 2000" would be detected as a range; forced as a list it is one.
  TextLines text("t", "0x1000 0x3000\n");
  absl::StatusOr<RegionTable> t = RegionTableReader::ParseAs(RegionFormat::kProcMaps, text);
  ASSERT_FALSE(t.ok());
  t = RegionTableReader::ParseAs(RegionFormat::kRangeList, text);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->regions[0].size(), 0x2000u);
  EXPECT_EQ(RegionTableReader::FormatName(RegionFormat::kSosMaddress), "sos-maddress");
}

}  // namespace
}  // namespace pageblame::regions

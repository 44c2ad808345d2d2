#include "processor/symbols/jit_dump.h"

#include <cstring>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/temp_dir_for_test.h"
#include "processor/symbols/test_util.h"

namespace pageblame::symbols {
namespace {

using ::testing::HasSubstr;

using DumpWriter = testing::JitDumpWriter;

std::string NameAt(const JitDump& dump, uint64_t addr) {
  const PerfMap::Entry* e = dump.map().Find(addr);
  return e ? e->name : "<none>";
}

TEST(JitDumpTest, CodeLoadsNameTheirBytes) {
  const std::string bytes =
      DumpWriter(7)
          .Load(0x7f0000001000, 0x100, 1, "void [System.Private.CoreLib] System.GC::Collect()[PreJIT]")
          .Record(2, std::string(40, '\1'))  // debug info: skipped by its size
          .Record(99, "later ids are skipped too")
          .Load(0x7f0000002000, 0, 2, "stub<1>")
          .bytes();
  absl::StatusOr<JitDump> dump = JitDump::Parse(bytes, 7, "jit-7.dump");
  ASSERT_TRUE(dump.ok()) << dump.status();
  EXPECT_EQ(dump->code_loads(), 2u);
  EXPECT_EQ(dump->warning(), "");
  EXPECT_EQ(NameAt(*dump, 0x7f0000001000), "void [System.Private.CoreLib] System.GC::Collect()[PreJIT]");
  EXPECT_EQ(NameAt(*dump, 0x7f00000010ff), "void [System.Private.CoreLib] System.GC::Collect()[PreJIT]");
  EXPECT_EQ(NameAt(*dump, 0x7f0000001100), "<none>");  // end is exclusive
  EXPECT_EQ(NameAt(*dump, 0x7f0000002000), "stub<1>");  // a zero-size blob names its first byte
  EXPECT_EQ(NameAt(*dump, 0x7f0000002001), "<none>");
}

TEST(JitDumpTest, LaterCodeWinsAndMovedCodeKeepsItsName) {
  const std::string bytes = DumpWriter(7)
                                .Load(0x1000, 0x100, 1, "Old")
                                .Load(0x1080, 0x10, 2, "New")
                                .Move(0x1000, 0x9000, 0x20, 1)
                                .bytes();
  absl::StatusOr<JitDump> dump = JitDump::Parse(bytes, 7, "jit-7.dump");
  ASSERT_TRUE(dump.ok()) << dump.status();
  EXPECT_EQ(NameAt(*dump, 0x107f), "Old");
  EXPECT_EQ(NameAt(*dump, 0x1080), "New");
  EXPECT_EQ(NameAt(*dump, 0x1090), "Old");
  EXPECT_EQ(NameAt(*dump, 0x9010), "Old");
  EXPECT_EQ(NameAt(*dump, 0x9020), "<none>");
}

TEST(JitDumpTest, ACutDumpKeepsTheRecordsBeforeTheCut) {
  const std::string whole = DumpWriter(7).Load(0x1000, 0x10, 1, "First").Load(0x2000, 0x10, 2, "Second").bytes();
  const std::string cut = whole.substr(0, whole.size() - 3);
  absl::StatusOr<JitDump> dump = JitDump::Parse(cut, 7, "/tmp/jit-7.dump");
  ASSERT_TRUE(dump.ok()) << dump.status();
  EXPECT_EQ(NameAt(*dump, 0x1000), "First");
  EXPECT_EQ(NameAt(*dump, 0x2000), "<none>");
  const size_t second = DumpWriter(7).Load(0x1000, 0x10, 1, "First").bytes().size();
  // What a JIT leaves while it writes: a note, not a warning.
  EXPECT_EQ(dump->warning(), "");
  EXPECT_THAT(dump->cut_note(), HasSubstr("/tmp/jit-7.dump: offset " + std::to_string(second)));
  EXPECT_THAT(dump->cut_note(), HasSubstr("is cut by the end of the file"));
  EXPECT_THAT(dump->cut_note(), HasSubstr("the 1 code records before it are used"));
  // A record header cut in the middle: the same.
  EXPECT_THAT(JitDump::Parse(whole + std::string(5, '\0'), 7, "d")->cut_note(), HasSubstr("offset " + std::to_string(whole.size())));
  // A size below the record header's own cannot be a JIT's: a warning.
  std::string tiny = DumpWriter(7).bytes();
  tiny += std::string("\0\0\0\0\x08\0\0\0", 8) + std::string(8, '\0');
  EXPECT_THAT(JitDump::Parse(tiny, 7, "d")->warning(), HasSubstr("offset 40: a record of 8 bytes"));
  EXPECT_EQ(JitDump::Parse(tiny, 7, "d")->cut_note(), "");
}

// What record keeps of a dump its JIT is still writing: the whole records.
TEST(JitDumpTest, TheWholeRecordsOfADumpBeingWritten) {
  const std::string one = DumpWriter(7).Load(0x1000, 0x10, 1, "First").bytes();
  const std::string whole = DumpWriter(7).Load(0x1000, 0x10, 1, "First").Load(0x2000, 0x10, 2, "Second").bytes();
  EXPECT_EQ(JitDump::WholeLength(whole), whole.size());
  for (size_t cut = one.size(); cut < whole.size(); ++cut) {
    EXPECT_EQ(JitDump::WholeLength(whole.substr(0, cut)), one.size()) << cut;
  }
  EXPECT_EQ(JitDump::WholeLength(whole.substr(0, 30)), 0u);  // the header cut
  EXPECT_EQ(JitDump::WholeLength("not a jitdump at all, no magic here"), 0u);
  absl::StatusOr<JitDump> kept = JitDump::Parse(whole.substr(0, JitDump::WholeLength(whole.substr(0, whole.size() - 1))), 7, "d");
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->cut_note(), "");
  EXPECT_EQ(kept->warning(), "");
  EXPECT_EQ(NameAt(*kept, 0x1000), "First");
}

TEST(JitDumpTest, ARecordWithoutANameIsCountedNotUsed) {
  DumpWriter w(7);
  w.Record(0, std::string(20, '\0'));  // shorter than JIT_CODE_LOAD's fixed part
  w.Load(0x1000, 0x10, 1, "Kept");
  absl::StatusOr<JitDump> dump = JitDump::Parse(w.bytes(), 7, "d");
  ASSERT_TRUE(dump.ok());
  EXPECT_EQ(NameAt(*dump, 0x1000), "Kept");
  EXPECT_THAT(dump->warning(), HasSubstr("1 code records unreadable"));
}

TEST(JitDumpTest, RefusesWhatIsNoJitdumpOfThisProcess) {
  EXPECT_THAT(JitDump::Parse("0x7f00 10 name\n", 7, "perf-7.map").status().message(),
              HasSubstr("perf-7.map: offset 0: not a jitdump"));
  EXPECT_THAT(JitDump::Parse("", 7, "empty").status().message(), HasSubstr("not a jitdump"));
  EXPECT_THAT(JitDump::Parse(DumpWriter(7, 0x4454694A).bytes(), 7, "d").status().message(),
              HasSubstr("other byte order"));
  EXPECT_THAT(JitDump::Parse(DumpWriter(7, 0x4A695444, 12).bytes(), 7, "d").status().message(),
              HasSubstr("offset 8: a jitdump header of 12 bytes"));
  absl::StatusOr<JitDump> other = JitDump::Parse(DumpWriter(8).Load(0x1000, 1, 1, "x").bytes(), 7, "jit-7.dump");
  EXPECT_EQ(other.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(other.status().message(), HasSubstr("the jitdump of pid 8, not of pid 7"));
}

TEST(JitDumpTest, LoadReadsAFileAndSaysWhenThereIsNone) {
  TempDir dir("pb_jitdump");
  const std::string path = dir.path() + "/jit-7.dump";
  std::ofstream(path, std::ios::binary) << DumpWriter(7).Load(0x1000, 0x10, 1, "OnDisk").bytes();
  absl::StatusOr<JitDump> dump = JitDump::Load(path, 7, /*force=*/false);
  ASSERT_TRUE(dump.ok()) << dump.status();
  EXPECT_EQ(NameAt(*dump, 0x1008), "OnDisk");
  EXPECT_EQ(JitDump::Load(dir.path() + "/jit-9.dump", 9, false).status().code(), absl::StatusCode::kNotFound);
}

TEST(JitDumpTest, LookedForWhereThePerfMapIs) {
  EXPECT_THAT(JitDump::CandidatePaths(12, "/data/run/perf.data", "/tmp", "/maps"),
              ::testing::ElementsAre("/data/run/perf.data.runtime/jit-12.dump", "/data/run/jit-12.dump",
                                     "/tmp/jit-12.dump", "/maps/jit-12.dump"));
  EXPECT_EQ(JitDump::DsoName(12), "/tmp/jit-12.dump");
}

}  // namespace
}  // namespace pageblame::symbols

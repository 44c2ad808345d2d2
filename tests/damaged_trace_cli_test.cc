// Issue 21: a damaged trace never crashes pageblame and never gets an
// answer that cannot be true. Each case changes a real trace the way the
// mutation run that found it did (one byte, one value), in a copy.
#include <sys/stat.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

#include "absl/strings/numbers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/cli_runner.h"
#include "tests/trace_fixtures.h"
#include "processor/base/format.h"
#include "processor/perf/compressed_test_util.h"
#include "tests/trace_patcher.h"

namespace pageblame::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TracePatcher Patcher(const std::string& trace) {
  absl::StatusOr<TracePatcher> t = TracePatcher::Open(TracePath(trace));
  EXPECT_TRUE(t.ok()) << t.status();
  return *std::move(t);
}

std::string Saved(const TracePatcher& t, const std::string& name) {
  const std::string path = ScratchPath(name);
  EXPECT_TRUE(t.Save(path).ok());
  return path;
}

uint64_t Hex(const nlohmann::json& v) {
  uint64_t x = 0;
  EXPECT_TRUE(absl::SimpleHexAtoi(v.get<std::string>(), &x)) << v;
  return x;
}

// `maps --json` of a trace: exit 0, and every region one the kernel can
// have: page-aligned, start below end.
nlohmann::json ExpectPossibleMaps(const std::string& path, CliRun* run) {
  *run = Pageblame("maps --json -i " + path);
  EXPECT_FALSE(run->crashed) << run->err;
  EXPECT_EQ(run->exit_code, 0) << run->err;
  nlohmann::json maps = nlohmann::json::parse(run->out, nullptr, false);
  EXPECT_TRUE(maps.is_array()) << run->out;
  if (!maps.is_array()) return maps;
  EXPECT_FALSE(maps.empty());
  for (const nlohmann::json& r : maps) {
    const uint64_t start = Hex(r["start"]), end = Hex(r["end"]);
    EXPECT_LT(start, end) << r;
    EXPECT_EQ(start % 4096, 0u) << r;
    EXPECT_EQ(end % 4096, 0u) << r;
  }
  return maps;
}

// Case 1: "REC->ret" -> "R/C->ret" in the stored format of sys_exit_mmap
// killed pageblame with SIGFPE inside libtraceevent's tep_parse_event (it
// folds the "constant" R/C and divides by zero). The print fmt is not read
// now: the answer is the intact trace's.
TEST(DamagedTraceCliTest, OneChangedByteInAPrintFmtChangesNothing) {
  TracePatcher t = Patcher("alloc-fp.data");
  const size_t name = t.bytes().find("name: sys_exit_mmap\n");
  ASSERT_NE(name, std::string::npos);
  const size_t rec = t.bytes().find("print fmt: \"0x%lx\", REC->ret", name);
  ASSERT_NE(rec, std::string::npos);
  t.Overwrite(rec + std::string("print fmt: \"0x%lx\", R").size(), "/");
  const std::string path = Saved(t, "print-fmt.data");
  const CliRun damaged = Pageblame("maps -i " + path);
  const CliRun intact = Pageblame("maps -i " + TracePath("alloc-fp.data"));
  EXPECT_FALSE(damaged.crashed) << damaged.err;
  EXPECT_EQ(damaged.exit_code, 0) << damaged.err;
  EXPECT_EQ(damaged.out, intact.out);
}

// Case 1, beyond the print fmt: a field layout that cannot be read makes the
// event's calls unreplayable; the trace is refused (exit 1), saying which
// format of which event is malformed, not answered without those calls.
TEST(DamagedTraceCliTest, AMalformedFieldOfAReplayedEventIsBadInput) {
  TracePatcher t = Patcher("alloc-fp.data");
  const size_t name = t.bytes().find("name: sys_enter_mmap\n");
  ASSERT_NE(name, std::string::npos);
  const size_t len = t.bytes().find("len;\toffset:24;", name);
  ASSERT_NE(len, std::string::npos);
  t.Overwrite(len + std::string("len;\toffset:").size(), "x");
  const CliRun r = Pageblame("maps -i " + Saved(t, "bad-field.data"));
  ExpectOneLineError(r, "the format of syscalls:sys_enter_mmap stored in the trace (TRACING_DATA) "
                        "is malformed");
  EXPECT_THAT(r.err, HasSubstr("bad offset 'x4'"));
  EXPECT_EQ(r.exit_code, 1);
}

// Case 2: an mmap whose len wraps the address space made `maps` print a
// region ending below its start, with exit 0 and no word of warning.
TEST(DamagedTraceCliTest, AnMmapLengthThatWrapsIsNotReplayedAndSaid) {
  TracePatcher t = Patcher("alloc-fp.data");
  absl::StatusOr<std::vector<uint64_t>> lens = t.FieldOffsets("syscalls:sys_enter_mmap", "len");
  ASSERT_TRUE(lens.ok()) << lens.status();
  ASSERT_GE(lens->size(), 3u);
  t.Write((*lens)[2], 0xffffff0000000000ull);
  CliRun r;
  ExpectPossibleMaps(Saved(t, "wrapped-len.data"), &r);
  EXPECT_THAT(r.err, HasSubstr("pageblame: warning: 1 call with values the kernel cannot have "
                               "returned, between "));
  EXPECT_THAT(r.err, HasSubstr("length 0xffffff0000000000"));
}

// Case 2: a corrupt mremap return (not page-aligned) made regions such as
// 0x...b800.
TEST(DamagedTraceCliTest, AnUnalignedMremapResultIsNotReplayedAndSaid) {
  TracePatcher t = Patcher("rules-record.data");
  absl::StatusOr<std::vector<uint64_t>> rets = t.FieldOffsets("syscalls:sys_exit_mremap", "ret");
  ASSERT_TRUE(rets.ok()) << rets.status();
  int changed = 0;
  for (uint64_t at : *rets) {
    const int64_t ret = static_cast<int64_t>(t.Read(at));
    if (ret > 0) t.Write(at, static_cast<uint64_t>(ret) + 0x800), ++changed;
  }
  ASSERT_GT(changed, 0);
  CliRun r;
  ExpectPossibleMaps(Saved(t, "unaligned-mremap.data"), &r);
  EXPECT_THAT(r.err, HasSubstr("with values the kernel cannot have returned"));
  EXPECT_THAT(r.err, HasSubstr("mremap succeeded with an unaligned returned address 0x"));
}

// Case 2: one bad sample_type byte made every sample unparsable; pageblame
// printed [] with exit 0 and `query` said "not mapped". Nothing parsed is
// bad input (exit 1), naming the file and the first sample's offset.
TEST(DamagedTraceCliTest, ATraceOfWhichNoSampleParsesIsBadInput) {
  TracePatcher t = Patcher("alloc-fp.data");
  const uint64_t at = t.FirstSampleTypeOffset();
  t.Write(at, t.Read(at) ^ 1);  // PERF_SAMPLE_IP: the sample id moves
  const std::string path = Saved(t, "bad-sample-type.data");
  for (const char* command : {"maps --json", "query 0x7f0000000000"}) {
    SCOPED_TRACE(command);
    const CliRun r = Pageblame(std::string(command) + " -i " + path);
    ExpectOneLineError(r, path + ": none of the trace's 80 samples of the events replay reads "
                                 "could be parsed; the first: record at offset 0x");
    EXPECT_EQ(r.exit_code, 1);
  }
}

// Some samples that cannot be parsed: the answer, and a warning with the
// time span they cover, like lost events, and why the first failed.
TEST(DamagedTraceCliTest, SamplesThatDoNotParseAreSaidWithTheirTimeSpan) {
  TracePatcher t = Patcher("alloc-fp.data");
  const uint64_t at = t.FirstSampleTypeOffset();
  t.Write(at, t.Read(at) ^ 0x10);  // PERF_SAMPLE_READ: samples of that event misread
  CliRun r;
  ExpectPossibleMaps(Saved(t, "bad-read.data"), &r);
  EXPECT_THAT(r.err, ::testing::ContainsRegex(
                         "pageblame: warning: [0-9]+ samples? could not be parsed between "
                         "[0-9]+\\.[0-9]{6} and [0-9]+\\.[0-9]{6}; pages changed then may be "
                         "misattributed"));
  EXPECT_THAT(r.err, HasSubstr("pageblame: the first could not be parsed because: "));
  EXPECT_THAT(r.err, HasSubstr("record at offset 0x"));
  // The intact trace says none of this.
  const CliRun intact = Pageblame("maps -i " + TracePath("alloc-fp.data"));
  EXPECT_THAT(intact.err, Not(HasSubstr("could not be parsed")));
}

// Case 5: an empty, short, bad-magic or directory trace, /dev/null and an
// empty `-i -` all exited 2 (usage) where they are bad input (1); each says
// which file and where.
TEST(DamagedTraceCliTest, TracesThatAreNotTracesAreBadInputNotBadUsage) {
  const std::string dir = ScratchPath("not-traces");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  std::ofstream(dir + "/empty.data").close();
  std::ofstream(dir + "/short.data") << "PERFILE2";
  std::ofstream(dir + "/magic.data") << "PERFILE3 and more than sixteen bytes";
  const struct {
    std::string args, message;
  } cases[] = {
      {"-i " + dir + "/empty.data", "empty.data: empty file: no perf.data header at offset 0"},
      {"-i " + dir + "/short.data", "short.data: not a perf.data file: only 8 bytes, its header at offset 0 needs 16"},
      {"-i " + dir + "/magic.data", "magic.data: not a perf.data file (bad magic): the 8 bytes at offset 0 are 'PERFILE3'"},
      {"-i " + dir, dir + ": is a directory, not a perf.data file"},
      {"-i /dev/null", "/dev/null: empty stream: no perf.data header at offset 0"},
      {"-i - </dev/null", "<stdin>: empty stream: no perf.data header at offset 0"},
      {"-i - <" + dir + "/short.data", "<stdin>: not a perf.data stream: only 8 bytes"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args);
    const CliRun r = Pageblame("maps " + c.args);
    ExpectOneLineError(r, c.message);
    EXPECT_EQ(r.exit_code, 1);
  }
}

// perf's compressor can keep the last bytes of a -z recording (its
// util/zstd.c ignores what ZSTD_flushStream leaves when a COMPRESSED record is
// full): seen live, a .NET recording whose zstd data ended 8 KiB into a
// 16 KiB DWARF sample. perf script reads the rest; so does pageblame, with a
// warning that names the cut record. Made here from rules-pipe.data,
// compressed in 4 KiB pieces, its last COMPRESSED record cut in half.
TEST(DamagedTraceCliTest, CompressedDataEndingInsideARecordIsAnsweredWithAWarning) {
  const std::string packed = perf::testing::CompressedCopy(perf::testing::ReadBytes(TracePath("rules-pipe.data")),
                                                           perf::format::kRecordCompressed, 4096);
  const perf::testing::TraceParts parts = perf::testing::SplitTrace(packed);
  ASSERT_TRUE(parts.pipe);
  perf::testing::Piece last;
  for (const perf::testing::Piece& p : perf::testing::Pieces(parts.data, parts.pipe)) {
    if (p.type == perf::format::kRecordCompressed) last = p;
  }
  ASSERT_GT(last.size, 200u);
  std::string cut_record = parts.data.substr(last.offset, last.size / 2);
  const uint16_t size = static_cast<uint16_t>(cut_record.size());
  std::memcpy(&cut_record[6], &size, sizeof size);
  const std::string cut = parts.head + parts.data.substr(0, last.offset) + cut_record +
                          parts.data.substr(last.offset + last.size);
  const std::string path = ScratchPath("cut-at-end-zstd-pipe.data");
  std::ofstream(path, std::ios::binary) << cut;

  CliRun run;
  nlohmann::json maps = ExpectPossibleMaps(path, &run);
  EXPECT_THAT(run.err, HasSubstr("warning: 1 record could not be parsed between"));
  EXPECT_THAT(run.err, HasSubstr("of the decompressed data"));
  EXPECT_THAT(run.err, ::testing::ContainsRegex("runs past the end of the compressed data|ends inside a record header"));
  // The answer is the whole trace's but for the end: most regions are there.
  CliRun whole_run;
  nlohmann::json whole = ExpectPossibleMaps(TracePath("rules-pipe.data"), &whole_run);
  EXPECT_GT(maps.size(), whole.size() / 2);
}

}  // namespace
}  // namespace pageblame::testing

// Malformed input: every case must end in an error status (never a crash,
// never an out-of-bounds read: run this under the ASan build too). Inputs are
// the checked-in fixtures, cut short or corrupted in a temporary copy.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/temp_dir_for_test.h"
#include "processor/base/temp_file_for_test.h"
#include "processor/perf/perf_reader.h"

namespace pageblame::perf {
namespace {

using ::testing::HasSubstr;

std::string Fixture(const std::string& name) {
  return std::string(PAGEBLAME_SOURCE_DIR) + "/processor/perf/testdata/" + name;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Opens `path`, reads every record and parses the ones replay uses; returns
// the first error. `records` counts the records Next() returned.
absl::Status Drain(const std::string& path, int* records = nullptr) {
  auto reader = PerfReader::Open(path);
  if (!reader.ok()) return reader.status();
  PerfReader& r = **reader;
  RawRecord rec;
  int n = 0;
  while (true) {
    absl::StatusOr<bool> more = r.Next(&rec);
    if (!more.ok()) return more.status();
    if (!*more) break;
    ++n;
    if (records) *records = n;
    absl::Status st;
    switch (rec.type) {
      case kRecordSample: { Sample s; st = r.ParseSample(rec, &s); break; }
      case kRecordComm: { CommRecord c; st = r.ParseComm(rec, &c); break; }
      case kRecordFork:
      case kRecordExit: { TaskRecord t; st = r.ParseTask(rec, &t); break; }
      case kRecordMmap:
      case kRecordMmap2: { MmapRecord m; st = r.ParseMmap(rec, &m); break; }
      case kRecordLost:
      case kRecordLostSamples: { LostRecord l; st = r.ParseLost(rec, &l); break; }
      default: break;
    }
    if (!st.ok()) return st;
  }
  if (records) *records = n;
  return absl::OkStatus();
}

// Offsets and sizes of the records Next() returns for an intact file.
std::vector<std::pair<uint64_t, size_t>> RecordSpans(const std::string& path) {
  std::vector<std::pair<uint64_t, size_t>> spans;
  auto reader = PerfReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  RawRecord rec;
  while (true) {
    auto more = (*reader)->Next(&rec);
    EXPECT_TRUE(more.ok());
    if (!more.ok() || !*more) break;
    spans.emplace_back(rec.offset, rec.bytes.size());
  }
  return spans;
}

void PutU16(std::string* bytes, size_t offset, uint16_t v) { memcpy(&(*bytes)[offset], &v, 2); }
void PutU64(std::string* bytes, size_t offset, uint64_t v) { memcpy(&(*bytes)[offset], &v, 8); }

TEST(PerfMalformedTest, MissingFile) {
  absl::Status st = PerfReader::Open("/nonexistent/trace.data").status();
  EXPECT_EQ(st.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(st.message()), HasSubstr("/nonexistent/trace.data"));
}

// Bad input, not bad usage: none of these is InvalidArgument (see the error
// codes in perf_reader.h), and each message names the file and, where there
// are bytes to speak of, the offset.
TEST(PerfMalformedTest, Directory) {
  absl::Status st = PerfReader::Open("/tmp").status();
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(st.message()), HasSubstr("/tmp: is a directory"));
}

TEST(PerfMalformedTest, EmptyFile) {
  TempFile f("");
  absl::Status st = PerfReader::Open(f.path()).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(st.message()), HasSubstr(f.path() + ": empty file"));
  EXPECT_THAT(std::string(st.message()), HasSubstr("offset 0"));
}

TEST(PerfMalformedTest, EmptyStream) {
  absl::Status st = PerfReader::Open("/dev/null").status();
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(st.message()), HasSubstr("/dev/null: empty stream"));
}

TEST(PerfMalformedTest, NotAPerfFile) {
  TempFile f("This is a text file, long enough to hold a perf header... but it is not.\n");
  absl::Status st = PerfReader::Open(f.path()).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(st.message()), HasSubstr("not a perf.data file"));
  EXPECT_THAT(std::string(st.message()), HasSubstr("offset 0 are 'This is ', not 'PERFILE2'"));
  TempFile tiny("PERF");
  st = PerfReader::Open(tiny.path()).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(st.message()), HasSubstr("only 4 bytes"));
  TempFile short_header("PERFILE2\x68");
  EXPECT_EQ(PerfReader::Open(short_header.path()).status().code(), absl::StatusCode::kDataLoss);
}

// A FIFO holds a pipe-mode stream: the same checks.
TEST(PerfMalformedTest, ShortOrBadStreams) {
  for (const std::string& bytes : {std::string("PERFILE2"), std::string(16, 'x'),
                                   std::string("PERFILE2\x68\0\0\0\0\0\0\0", 16)}) {
    TempDir dir;
    const std::string fifo = dir.path() + "/trace.fifo";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << fifo;
    std::thread writer([&] {
      int fd = ::open(fifo.c_str(), O_WRONLY);
      if (fd >= 0) {
        (void)!::write(fd, bytes.data(), bytes.size());
        ::close(fd);
      }
    });
    absl::Status st = PerfReader::Open(fifo).status();
    writer.join();
    ::unlink(fifo.c_str());
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.code(), absl::StatusCode::kInvalidArgument) << st;
    EXPECT_THAT(std::string(st.message()), HasSubstr(fifo + ": ")) << st;
    EXPECT_THAT(std::string(st.message()), HasSubstr("offset")) << st;
  }
}

TEST(PerfMalformedTest, OtherByteOrder) {
  for (const char* name : {"record_g.data", "pipe.data"}) {
    std::string bytes = ReadBytes(Fixture(name));
    memcpy(&bytes[0], "2ELIFREP", 8);
    TempFile f(bytes);
    absl::Status st = PerfReader::Open(f.path()).status();
    EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented) << name;
    EXPECT_THAT(std::string(st.message()), HasSubstr("big-endian")) << name;
  }
}

TEST(PerfMalformedTest, OldFormatV1) {
  std::string bytes = ReadBytes(Fixture("record_g.data"));
  memcpy(&bytes[0], "PERFFILE", 8);
  TempFile f(bytes);
  absl::Status st = PerfReader::Open(f.path()).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented);
}

TEST(PerfMalformedTest, BadHeaderSize) {
  std::string bytes = ReadBytes(Fixture("record_g.data"));
  PutU64(&bytes, 8, 50);  // header.size < sizeof(perf_file_header)
  TempFile f(bytes);
  absl::Status st = PerfReader::Open(f.path()).status();
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(std::string(st.message()), HasSubstr("header size 50"));
}

// What a SIGKILLed perf record leaves: the header still says data size 0.
TEST(PerfMalformedTest, UnfinalizedHeader) {
  std::string bytes = ReadBytes(Fixture("record_g.data"));
  PutU64(&bytes, 48, 0);  // data.size
  TempFile f(bytes);
  absl::Status st = PerfReader::Open(f.path()).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(st.message()), HasSubstr("never finalized"));
}

TEST(PerfMalformedTest, AttrsSectionPastEnd) {
  std::string bytes = ReadBytes(Fixture("record_g.data"));
  PutU64(&bytes, 32, 1 << 30);  // attrs.size
  TempFile f(bytes);
  absl::Status st = PerfReader::Open(f.path()).status();
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(std::string(st.message()), HasSubstr("attrs section"));
}

TEST(PerfMalformedTest, TruncatedInsideDataSection) {
  std::string bytes = ReadBytes(Fixture("trace_record.data"));
  // "# data offset : 1704", "# data size : 21768" (perf report --header-only)
  TempFile f(bytes.substr(0, 1704 + 5000));
  absl::Status st = PerfReader::Open(f.path()).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(st.message()), HasSubstr("data section [0x6a8, 0x5bb0) runs past the end"));
}

// Every cut of a file-mode trace is an error: within the header, attrs, data
// or feature sections (the feature table sits after the data and every
// feature section must lie in the file).
TEST(PerfMalformedTest, TruncatedEverywhereFileMode) {
  for (const char* name : {"buildid_mmap.data", "record_g.data"}) {
    std::string bytes = ReadBytes(Fixture(name));
    ASSERT_TRUE(Drain(Fixture(name)).ok());
    const size_t step = bytes.size() < 12000 ? 1 : 3;
    for (size_t cut = 0; cut < bytes.size(); cut += step) {
      TempFile f(bytes.substr(0, cut));
      EXPECT_FALSE(Drain(f.path()).ok()) << name << " cut at " << cut;
    }
  }
}

// A pipe stream has no length: a cut at a record boundary is a clean (short)
// end, a cut inside a record is an error naming that record's offset.
TEST(PerfMalformedTest, TruncatedPipe) {
  const std::string bytes = ReadBytes(Fixture("pipe.data"));
  const auto spans = RecordSpans(Fixture("pipe.data"));
  ASSERT_GT(spans.size(), 10u);
  for (size_t i = 0; i < spans.size(); ++i) {
    const uint64_t offset = spans[i].first;
    {
      TempFile f(bytes.substr(0, offset));
      int records = -1;
      EXPECT_TRUE(Drain(f.path(), &records).ok()) << "cut at " << offset;
      EXPECT_EQ(records, static_cast<int>(i));
    }
    for (size_t into : {size_t{3}, size_t{7}, spans[i].second - 1}) {
      TempFile f(bytes.substr(0, offset + into));
      absl::Status st = Drain(f.path());
      EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss) << "cut at " << offset + into;
      EXPECT_THAT(std::string(st.message()), HasSubstr(absl::StrFormat("offset 0x%x", offset)));
    }
  }
  // Any cut at all: an error or a clean end, never a crash.
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    TempFile f(bytes.substr(0, cut));
    (void)Drain(f.path());
  }
  // Header only: a valid, empty stream.
  TempFile header(bytes.substr(0, 16));
  int records = -1;
  EXPECT_TRUE(Drain(header.path(), &records).ok());
  EXPECT_EQ(records, 0);
}

TEST(PerfMalformedTest, RecordSizeBelowHeader) {
  for (const char* name : {"record_g.data", "pipe.data"}) {
    std::string bytes = ReadBytes(Fixture(name));
    const auto spans = RecordSpans(Fixture(name));
    const uint64_t offset = spans[5].first;
    PutU16(&bytes, offset + 6, 4);
    TempFile f(bytes);
    absl::Status st = Drain(f.path());
    EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss) << name;
    EXPECT_THAT(std::string(st.message()),
                HasSubstr(absl::StrFormat("record at offset 0x%x: size 4 < 8", offset)));
  }
}

TEST(PerfMalformedTest, RecordRunsPastDataEnd) {
  std::string bytes = ReadBytes(Fixture("record_g.data"));
  const auto spans = RecordSpans(Fixture("record_g.data"));
  const uint64_t offset = spans.back().first;  // the last record (FINISHED_ROUND)
  PutU16(&bytes, offset + 6, 0xfff8);
  TempFile f(bytes);
  absl::Status st = Drain(f.path());
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(st.message()), HasSubstr(absl::StrFormat("offset 0x%x", offset)));
  EXPECT_THAT(std::string(st.message()), HasSubstr("runs past the end of the data section"));
}

// A sample whose callchain length claims more than the record holds.
TEST(PerfMalformedTest, SampleCallchainTooLong) {
  std::string bytes = ReadBytes(Fixture("record_g.data"));
  auto reader = PerfReader::Open(Fixture("record_g.data"));
  ASSERT_TRUE(reader.ok());
  RawRecord rec;
  uint64_t offset = 0;
  while (*(*reader)->Next(&rec)) {
    if (rec.type == kRecordSample) {
      offset = rec.offset;
      break;
    }
  }
  ASSERT_NE(offset, 0u);
  // sample_type IP|TID|TIME|CALLCHAIN|ID|CPU|PERIOD|RAW (perf evlist -v): IP,
  // TID, TIME, ID, CPU, PERIOD (6 u64) precede the callchain's nr
  // (perf_output_sample order).
  PutU64(&bytes, offset + 8 + 6 * 8, 1000);
  TempFile f(bytes);
  absl::Status st = Drain(f.path());
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(st.message()), HasSubstr("CALLCHAIN"));
  EXPECT_THAT(std::string(st.message()), HasSubstr(absl::StrFormat("offset 0x%x", offset)));
}

// Random corruption of the data section: errors are fine, crashes are not.
TEST(PerfMalformedTest, RandomCorruptionDoesNotCrash) {
  const std::string original = ReadBytes(Fixture("record_g.data"));
  const std::string pipe = ReadBytes(Fixture("pipe.data"));
  std::mt19937 rng(42);
  int failures = 0;
  for (int i = 0; i < 600; ++i) {
    std::string bytes = (i % 2) ? pipe : original;
    const size_t begin = (i % 2) ? 16 : 0x3f8;  // past the headers
    std::uniform_int_distribution<size_t> pos(begin, bytes.size() - 1);
    for (int k = 0; k < 4; ++k) bytes[pos(rng)] = static_cast<char>(rng());
    TempFile f(bytes);
    if (!Drain(f.path()).ok()) ++failures;
  }
  EXPECT_GT(failures, 0);  // the corruption is noticed at least sometimes
}

TEST(PerfMalformedTest, FileModeOnStdinIsRefused) {
  int saved = dup(STDIN_FILENO);
  int fd = open(Fixture("record_g.data").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  dup2(fd, STDIN_FILENO);
  close(fd);
  absl::Status st = PerfReader::Open("-").status();
  dup2(saved, STDIN_FILENO);
  close(saved);
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(std::string(st.message()), HasSubstr("opened by path"));
}

}  // namespace
}  // namespace pageblame::perf

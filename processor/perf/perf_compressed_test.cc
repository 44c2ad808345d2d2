// Compressed traces (perf record -z): PERF_RECORD_COMPRESSED / COMPRESSED2
// records hold one zstd stream of ordinary records. The reader must hand out
// exactly the records an uncompressed trace of the same data holds, in file
// and pipe mode, with records cut across COMPRESSED records put back
// together; and every corrupt or cut input must end in an error status,
// never a crash (run this under the ASan build too).
//
// The oracles are compressed_test_util.h's DecompressedCopy (for the
// recorded -z traces in traces/) and CompressedCopy (for the uncompressed
// recordings of traces/, compressed here with cuts anywhere).
#include <fcntl.h>
#include <unistd.h>

#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/temp_file_for_test.h"
#include "processor/perf/compressed_test_util.h"
#include "processor/perf/perf_format.h"
#include "processor/perf/perf_reader.h"
#include "processor/perf/perf_test_builder.h"

namespace pageblame::perf {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::Attr;
using testing::CompressedCopy;
using testing::CompressedRecord;
using testing::CompressPiece;
using testing::DecompressedCopy;
using testing::PipeHeader;
using testing::ReadBytes;
using testing::RecordBuilder;

std::string Trace(const std::string& name) {
  return std::string(PAGEBLAME_SOURCE_DIR) + "/traces/" + name;
}

// The records Next() hands out, as bytes, with the offsets it gives them.
struct Read {
  std::vector<std::tuple<uint32_t, uint16_t, std::string>> records;
  std::vector<std::pair<uint64_t, uint64_t>> offsets;  // offset, decompressed_offset
  CompressionStats stats;
  size_t samples = 0;
  size_t parse_errors = 0;  // samples ParseSample refused
  absl::Status status;
  absl::Status cut_at_end;
};

Read ReadRecords(const std::string& path) {
  Read out;
  auto reader = PerfReader::Open(path);
  if (!reader.ok()) {
    out.status = reader.status();
    return out;
  }
  PerfReader& r = **reader;
  RawRecord rec;
  while (true) {
    absl::StatusOr<bool> more = r.Next(&rec);
    if (!more.ok()) {
      out.status = more.status();
      break;
    }
    if (!*more) break;
    out.records.emplace_back(rec.type, rec.misc,
                             std::string(reinterpret_cast<const char*>(rec.bytes.data()),
                                         rec.bytes.size()));
    out.offsets.emplace_back(rec.offset, rec.decompressed_offset);
    if (rec.type == kRecordSample) {
      Sample s;
      out.parse_errors += !r.ParseSample(rec, &s).ok();
      ++out.samples;
    }
  }
  if (r.compression_stats() != nullptr) out.stats = *r.compression_stats();
  out.cut_at_end = r.cut_at_end();
  return out;
}

Read ReadBytesAsTrace(const std::string& bytes) {
  TempFile f(bytes);
  return ReadRecords(f.path());
}

TEST(PerfCompressedTest, RecordedTracesReadLikeTheirDecompressedCopies) {
  for (const char* name : {"rules-zstd.data", "rules-zstd-pipe.data", "rules-dwarf-zstd.data"}) {
    SCOPED_TRACE(name);
    const std::string bytes = ReadBytes(Trace(name));
    Read packed = ReadRecords(Trace(name));
    ASSERT_TRUE(packed.status.ok()) << packed.status;
    Read plain = ReadBytesAsTrace(DecompressedCopy(bytes));
    ASSERT_TRUE(plain.status.ok()) << plain.status;
    EXPECT_GT(packed.stats.compressed_records, 0u);
    EXPECT_EQ(plain.stats.compressed_records, 0u);
    EXPECT_GT(packed.samples, 300u);  // 165 calls, enter + exit
    EXPECT_EQ(packed.samples, plain.samples);
    EXPECT_EQ(packed.parse_errors, 0u);
    ASSERT_EQ(packed.records.size(), plain.records.size());
    EXPECT_TRUE(packed.records == plain.records);
    // Every record of the decompressed stream was handed out, in order.
    uint64_t next = 0;
    for (const auto& [offset, decompressed] : packed.offsets) {
      if (decompressed == RawRecord::kNotCompressed) continue;
      EXPECT_GE(decompressed, next);
      next = decompressed;
    }
    EXPECT_LE(next, packed.stats.decompressed_bytes);
    // record.sh records the two rules traces with 16 KiB ring buffers
    // (-m 4): perf compresses a wrapped read in two parts, and records are
    // cut across COMPRESSED records.
    if (std::string(name) != "rules-dwarf-zstd.data") {
      EXPECT_GT(packed.stats.straddling_records, 0u);
    }
  }
}

TEST(PerfCompressedTest, RecordedTracesHaveTheCompressedFeature) {
  for (const char* name : {"rules-zstd.data", "rules-zstd-pipe.data"}) {
    auto reader = PerfReader::Open(Trace(name));
    ASSERT_TRUE(reader.ok()) << reader.status();
    const FileInfo& info = (*reader)->info();
    EXPECT_TRUE(info.compressed) << name;
    EXPECT_EQ(info.compression_type, format::kCompressionZstd);
    EXPECT_EQ(info.compression_level, 1u);  // perf record -z
    EXPECT_GT(info.compression_mmap_len, 0u);
    EXPECT_EQ(info.attrs.size(), 8u);
    EXPECT_FALSE(info.tracing_data.empty());
  }
}

TEST(PerfCompressedTest, UncompressedTracesReadTheSameOnceCompressed) {
  // The recordings without -z, compressed here with a flush every `piece`
  // bytes: at 1000 most COMPRESSED records end inside a record, some inside
  // a record's header; at 1 MiB each run of records is one COMPRESSED record.
  for (const char* name : {"rules-record.data", "rules-pipe.data", "rules-trace.data"}) {
    const std::string bytes = ReadBytes(Trace(name));
    Read plain = ReadRecords(Trace(name));
    ASSERT_TRUE(plain.status.ok()) << plain.status;
    for (uint32_t type : {format::kRecordCompressed, format::kRecordCompressed2}) {
      for (size_t piece : {size_t{1000}, size_t{4096}, size_t{1} << 20}) {
        SCOPED_TRACE(std::string(name) + " type " + std::to_string(type) + " piece " +
                     std::to_string(piece));
        Read packed = ReadBytesAsTrace(CompressedCopy(bytes, type, piece));
        ASSERT_TRUE(packed.status.ok()) << packed.status;
        ASSERT_EQ(packed.records.size(), plain.records.size());
        EXPECT_TRUE(packed.records == plain.records);
        EXPECT_GT(packed.stats.compressed_records, 0u);
        if (piece == 1000) {
          EXPECT_GT(packed.stats.straddling_records, 10u);
          EXPECT_GT(packed.stats.compressed_records, 20u);
        }
      }
    }
  }
}

TEST(PerfCompressedTest, BigTraceThroughTheBuffer) {
  // node-trace.data: 2.2 MB, records up to the callchain limit; many
  // buffer refills, records cut by the buffer's end.
  const std::string bytes = ReadBytes(Trace("node-trace.data"));
  Read plain = ReadRecords(Trace("node-trace.data"));
  ASSERT_TRUE(plain.status.ok()) << plain.status;
  for (size_t piece : {size_t{777}, size_t{3} << 20}) {
    SCOPED_TRACE(piece);
    Read packed = ReadBytesAsTrace(CompressedCopy(bytes, format::kRecordCompressed2, piece));
    ASSERT_TRUE(packed.status.ok()) << packed.status;
    ASSERT_EQ(packed.records.size(), plain.records.size());
    EXPECT_TRUE(packed.records == plain.records);
    EXPECT_GT(packed.stats.decompressed_bytes, 2 * RecordDecompressor::kMinRingSize);
  }
}

TEST(PerfCompressedTest, PipeModeFromStdin) {
  Read from_file = ReadRecords(Trace("rules-zstd-pipe.data"));
  ASSERT_TRUE(from_file.status.ok());
  int saved = dup(STDIN_FILENO);
  int fd = open(Trace("rules-zstd-pipe.data").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(dup2(fd, STDIN_FILENO), STDIN_FILENO);
  close(fd);
  Read from_stdin = ReadRecords("-");
  dup2(saved, STDIN_FILENO);
  close(saved);
  ASSERT_TRUE(from_stdin.status.ok()) << from_stdin.status;
  EXPECT_TRUE(from_stdin.records == from_file.records);
  EXPECT_EQ(from_stdin.stats.compressed_records, from_file.stats.compressed_records);
}

// --- Hand-built streams: one attr, COMM records of known sizes. ---

constexpr uint64_t kSampleType = kSampleTid | kSampleTime;

std::string Comm(uint32_t pid, const std::string& name) {
  return RecordBuilder(kRecordComm).U32(pid).U32(pid).Str(name, (name.size() + 8) & ~size_t{7})
      .Finish();
}

std::string StreamHead() {
  RecordBuilder attr(kRecordHeaderAttr);
  attr.Bytes(Attr(128, 2, 0x10, kSampleType, 0, false)).U64(7);
  return PipeHeader() + attr.Finish();
}

// `bytes` compressed as one stream, cut into one COMPRESSED record at each of
// `cuts` (offsets into `bytes`, increasing) and at the end.
std::vector<std::string> Compress(const std::string& bytes, std::vector<size_t> cuts,
                                  uint32_t type = format::kRecordCompressed) {
  ZSTD_CCtx* ctx = ZSTD_createCCtx();
  std::vector<std::string> out;
  size_t from = 0;
  cuts.push_back(bytes.size());
  for (size_t cut : cuts) {
    std::vector<std::string> recs = CompressPiece(ctx, bytes.substr(from, cut - from), type);
    EXPECT_LE(recs.size(), 1u);  // none for an empty piece
    out.push_back(recs.empty() ? CompressedRecord(type, "") : recs[0]);
    from = cut;
  }
  ZSTD_freeCCtx(ctx);
  return out;
}

TEST(PerfCompressedTest, ARecordCutAcrossThreeCompressedRecordsWithARoundBetween) {
  const std::string a = Comm(1, "first"), b = Comm(2, std::string(100, 'b')), c = Comm(3, "c");
  const std::string plain = a + b + c;
  // b starts in the first COMPRESSED record, its header is cut after 5
  // bytes, the second holds 10 more of its bytes, the third the rest and c.
  const size_t b_at = a.size();
  for (uint32_t type : {format::kRecordCompressed, format::kRecordCompressed2}) {
    SCOPED_TRACE(type);
    std::vector<std::string> packed = Compress(plain, {b_at + 5, b_at + 15}, type);
    const std::string round = RecordBuilder(kRecordFinishedRound).Finish();
    const std::string head = StreamHead();
    // A FINISHED_ROUND written by perf between the COMPRESSED records comes
    // out before the cut record, as perf's session.c processes it.
    const std::string stream = head + packed[0] + round + packed[1] + packed[2];
    Read r = ReadBytesAsTrace(stream);
    ASSERT_TRUE(r.status.ok()) << r.status;
    ASSERT_EQ(r.records.size(), 4u);
    EXPECT_EQ(std::get<2>(r.records[0]), a);
    EXPECT_EQ(std::get<0>(r.records[1]), kRecordFinishedRound);
    EXPECT_EQ(std::get<2>(r.records[2]), b);
    EXPECT_EQ(std::get<2>(r.records[3]), c);
    // Offsets: the COMPRESSED record each record began in, and the place in
    // the decompressed stream.
    const uint64_t first = head.size();
    const uint64_t third = first + packed[0].size() + round.size() + packed[1].size();
    EXPECT_EQ(r.offsets[0], std::make_pair(first, uint64_t{0}));
    EXPECT_EQ(r.offsets[1].second, RawRecord::kNotCompressed);
    EXPECT_EQ(r.offsets[2], std::make_pair(first, uint64_t{b_at}));
    EXPECT_EQ(r.offsets[3], std::make_pair(third, uint64_t{b_at + b.size()}));
    EXPECT_EQ(r.stats.straddling_records, 1u);
    EXPECT_EQ(r.stats.compressed_records, 3u);
    EXPECT_EQ(r.stats.decompressed_bytes, plain.size());
  }
}

// `bytes` as one whole zstd frame whose header asks for a 2^window_log
// window (its size not stated, as in a stream).
std::string Frame(const std::string& bytes, int window_log) {
  ZSTD_CCtx* ctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(ctx, ZSTD_c_windowLog, window_log);
  ZSTD_CCtx_setParameter(ctx, ZSTD_c_contentSizeFlag, 0);
  std::string out(ZSTD_compressBound(bytes.size()) + 64, '\0');
  ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
  ZSTD_outBuffer o{out.data(), out.size(), 0};
  EXPECT_EQ(ZSTD_compressStream2(ctx, &o, &in, ZSTD_e_end), 0u);
  ZSTD_freeCCtx(ctx);
  out.resize(o.pos);
  return out;
}

// The decoder's ring is made for a frame's window: a later frame with a
// larger one (perf's newer zstd.c ends a frame per COMPRESSED record) gets
// a larger ring, and the record cut between the two frames moves with it.
// Many records through it wrap the ring, cutting records there too.
TEST(PerfCompressedTest, AFrameWithALargerWindowTakesWhatWasNotReadYetAlong) {
  std::string plain;
  for (uint32_t i = 0; plain.size() < 5 * RecordDecompressor::kMinRingSize; ++i) {
    plain += Comm(i, std::string(1 + (i * 7919) % 3000, static_cast<char>('a' + i % 26)));
  }
  const size_t cut = plain.size() / 3 + 5;  // inside a record
  const std::string small = Frame(plain.substr(0, cut), 17), large = Frame(plain.substr(cut), 24);
  ASSERT_LT(small.size() + large.size(), 65000u);  // each fits one COMPRESSED record
  const std::string stream = StreamHead() + CompressedRecord(format::kRecordCompressed, small) +
                             CompressedRecord(format::kRecordCompressed, large);
  Read r = ReadBytesAsTrace(stream);
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_TRUE(r.cut_at_end.ok()) << r.cut_at_end;
  std::string read;
  for (const auto& rec : r.records) read += std::get<2>(rec);
  EXPECT_TRUE(read == plain);
  EXPECT_EQ(r.stats.decompressed_bytes, plain.size());
  EXPECT_EQ(r.stats.straddling_records, 1u);
}

TEST(PerfCompressedTest, EmptyCompressedRecordsAreFine) {
  const std::string plain = Comm(1, "x");
  std::vector<std::string> packed = Compress(plain, {0, 0, plain.size()});
  std::string stream = StreamHead();
  for (const std::string& p : packed) stream += p;
  Read r = ReadBytesAsTrace(stream);
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_EQ(std::get<2>(r.records[0]), plain);
}

// --- Errors ---

void ExpectDataLoss(const Read& r, const std::string& what) {
  EXPECT_EQ(r.status.code(), absl::StatusCode::kDataLoss) << r.status;
  EXPECT_THAT(std::string(r.status.message()), HasSubstr(what));
}

TEST(PerfCompressedTest, CorruptZstdDataIsAnError) {
  const std::string plain = Comm(1, "abc") + Comm(2, "def");
  std::vector<std::string> packed = Compress(plain, {});
  std::string bad = packed[0];
  bad[8] ^= 0x5a;  // the zstd frame's magic number
  const std::string head = StreamHead();
  Read r = ReadBytesAsTrace(head + bad);
  ExpectDataLoss(r, "corrupt zstd data");
  EXPECT_THAT(std::string(r.status.message()),
              HasSubstr(absl::StrFormat("COMPRESSED record at offset 0x%x", head.size())));
}

// A zstd skippable frame: magic 0x184D2A5?, a length, that many bytes (here
// only `present` of them).
std::string SkippableFrame(uint32_t length, size_t present) {
  std::string f;
  testing::Append<uint32_t>(&f, 0x184D2A53);
  testing::Append<uint32_t>(&f, length);
  return f + std::string(present, 's');
}

// The fuzz campaign's case: a skippable frame claiming 0xfffffff0 bytes
// before the first COMPRESSED record's data swallowed the whole stream
// (exit 0, no samples, nothing said).
TEST(PerfCompressedTest, SkippableFrameIsRefusedWithItsPlace) {
  const std::string plain = Comm(1, "abc") + Comm(2, "def");
  std::vector<std::string> packed = Compress(plain, {});
  const std::string head = StreamHead();
  const std::string bad = CompressedRecord(
      format::kRecordCompressed, SkippableFrame(0xfffffff0, 8) + testing::CompressedPayload(packed[0]));
  Read r = ReadBytesAsTrace(head + bad);
  ExpectDataLoss(r, "a zstd skippable frame (magic 0x184d2a53, 4294967280 bytes) at byte 0");
  EXPECT_THAT(std::string(r.status.message()),
              HasSubstr(absl::StrFormat("COMPRESSED record at offset 0x%x", head.size())));
  EXPECT_TRUE(r.records.empty());
}

// After a whole frame (perf's newer zstd.c ends one per COMPRESSED record),
// in the same record or the next.
TEST(PerfCompressedTest, SkippableFrameAfterAWholeFrameIsRefused) {
  const std::string a = Comm(1, "abc");
  std::string frame(ZSTD_compressBound(a.size()), '\0');
  frame.resize(ZSTD_compress(frame.data(), frame.size(), a.data(), a.size(), 1));
  const std::string skip = SkippableFrame(16, 16);
  for (bool same_record : {true, false}) {
    SCOPED_TRACE(same_record);
    const std::string stream =
        same_record ? StreamHead() + CompressedRecord(format::kRecordCompressed, frame + skip)
                    : StreamHead() + CompressedRecord(format::kRecordCompressed, frame) +
                          CompressedRecord(format::kRecordCompressed, skip);
    Read r = ReadBytesAsTrace(stream);
    ExpectDataLoss(r, "a zstd skippable frame");
    EXPECT_EQ(r.records.size(), 1u);  // the record before it
  }
}

// Its magic cut by the end of a COMPRESSED record: zstd then asks for the
// skipped bytes, more than any compressed block.
TEST(PerfCompressedTest, SkippableFrameCutByARecordEndIsRefused) {
  const std::string skip = SkippableFrame(0xfffffff0, 8);
  const std::string stream = StreamHead() +
                             CompressedRecord(format::kRecordCompressed, skip.substr(0, 3)) +
                             CompressedRecord(format::kRecordCompressed, skip.substr(3));
  ExpectDataLoss(ReadBytesAsTrace(stream), "a skippable frame?");
}

// perf's compressor can keep a recording's last bytes (util/zstd.c ignores
// what ZSTD_flushStream leaves): the data then ends inside a record. The
// records before it are read, and the cut is reported, not failed on.
TEST(PerfCompressedTest, DataEndingInsideARecordEndsTheDataAndIsReported) {
  const std::string plain = Comm(1, "abc") + Comm(2, std::string(50, 'd'));
  for (size_t cut : {size_t{20}, size_t{27}, plain.size() - 1}) {
    SCOPED_TRACE(cut);
    std::vector<std::string> packed = Compress(plain, {cut});
    Read r = ReadBytesAsTrace(StreamHead() + packed[0]);  // the rest is missing
    ASSERT_TRUE(r.status.ok()) << r.status;
    EXPECT_EQ(r.records.size(), cut >= 24 ? 1u : 0u);
    ASSERT_FALSE(r.cut_at_end.ok());
    EXPECT_EQ(r.cut_at_end.code(), absl::StatusCode::kDataLoss);
    EXPECT_THAT(std::string(r.cut_at_end.message()), HasSubstr("the compressed data"));
    EXPECT_THAT(std::string(r.cut_at_end.message()), HasSubstr("of the decompressed data"));
  }
  // Whole data: nothing to report.
  Read whole = ReadBytesAsTrace(StreamHead() + Compress(plain, {})[0]);
  EXPECT_TRUE(whole.status.ok()) << whole.status;
  EXPECT_EQ(whole.records.size(), 2u);
  EXPECT_TRUE(whole.cut_at_end.ok());
}

// The zstd stream of `plain`, flushed every 4 KiB (small blocks, as perf's
// batches make), as one string.
std::string ZstdFlushedEvery4K(const std::string& plain) {
  ZSTD_CCtx* ctx = ZSTD_createCCtx();
  std::string z;
  for (size_t i = 0; i < plain.size(); i += 4096) {
    for (const std::string& r : CompressPiece(ctx, plain.substr(i, 4096), format::kRecordCompressed)) {
      z += testing::CompressedPayload(r);
    }
  }
  ZSTD_freeCCtx(ctx);
  return z;
}

// What Finish() says of a trace whose last COMPRESSED record holds the
// first `zstd_bytes` of `z`.
std::string CutAtTheEnd(const std::string& z, size_t zstd_bytes, uint32_t type) {
  const std::string rec = CompressedRecord(type, z.substr(0, zstd_bytes));
  RecordDecompressor d("cut.data");
  RawRecord raw;
  raw.type = type;
  raw.bytes = absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(rec.data()), rec.size());
  EXPECT_TRUE(d.Feed(raw).ok());
  RawRecord out;
  size_t records = 0;
  for (absl::StatusOr<bool> got = d.Next(&out); got.ok() && *got; got = d.Next(&out)) ++records;
  EXPECT_GT(records, 0u);
  const absl::Status end = d.Finish();
  EXPECT_EQ(end.code(), absl::StatusCode::kDataLoss);
  return std::string(end.message());
}

// perf record -z loses what zstd holds after the recording's last batch
// when that batch's last COMPRESSED record is full (recorder/perf_control.h):
// the cut is then said to be perf's, with the lost rest; a cut after a
// record that is not full is only a cut.
TEST(PerfCompressedTest, ACutAfterAFullCompressedRecordIsSaidToBePerfsLoss) {
  std::mt19937 random(7);
  std::string plain;
  for (int i = 0; i < 12; ++i) {
    std::string payload(16000 - 8, '\0');
    for (char& c : payload) c = static_cast<char>(random());
    plain += RecordBuilder(kRecordSample).Bytes(payload).Finish();
  }
  const std::string z = ZstdFlushedEvery4K(plain);
  ASSERT_GT(z.size(), RecordDecompressor::kPerfFullCompressed);
  for (auto [type, full] : {std::pair{format::kRecordCompressed, RecordDecompressor::kPerfFullCompressed},
                            std::pair{format::kRecordCompressed2, RecordDecompressor::kPerfFullCompressed2}}) {
    SCOPED_TRACE(type);
    const std::string perfs = CutAtTheEnd(z, full, type);
    EXPECT_THAT(perfs, HasSubstr("runs past the end of the compressed data"));
    EXPECT_THAT(perfs, HasSubstr(absl::StrFormat("the last COMPRESSED record is full (%u zstd bytes", full)));
    EXPECT_THAT(perfs, HasSubstr("the records after this one are missing too"));
    const std::string plain_cut = CutAtTheEnd(z, full - 100, type);
    EXPECT_THAT(plain_cut, HasSubstr("runs past the end of the compressed data"));
    EXPECT_THAT(plain_cut, Not(HasSubstr("is full")));
  }
}

TEST(PerfCompressedTest, DecompressedRecordSmallerThanItsHeaderIsAnError) {
  std::string tiny = Comm(1, "abc");
  tiny[6] = 4;  // size 4 < 8
  tiny[7] = 0;
  std::vector<std::string> packed = Compress(Comm(1, "ok") + tiny, {});
  Read r = ReadBytesAsTrace(StreamHead() + packed[0]);
  EXPECT_EQ(r.records.size(), 1u);
  ExpectDataLoss(r, "size 4 < 8");
  EXPECT_THAT(std::string(r.status.message()),
              HasSubstr("record at offset 0x18 of the decompressed data"));
}

TEST(PerfCompressedTest, BadCompressed2SizesAreErrors) {
  std::vector<std::string> packed =
      Compress(Comm(1, "abc"), {}, format::kRecordCompressed2);
  std::string big = packed[0];
  testing::Put<uint64_t>(&big, 8, big.size());  // data_size past the record
  ExpectDataLoss(ReadBytesAsTrace(StreamHead() + big), "runs past the record");
  std::string short_rec = RecordBuilder(format::kRecordCompressed2).Finish();  // no data_size
  ExpectDataLoss(ReadBytesAsTrace(StreamHead() + short_rec), "too short for its data_size");
}

TEST(PerfCompressedTest, CompressedInsideCompressedIsAnError) {
  std::vector<std::string> inner = Compress(Comm(1, "abc"), {});
  std::vector<std::string> outer = Compress(inner[0], {});
  ExpectDataLoss(ReadBytesAsTrace(StreamHead() + outer[0]), "a COMPRESSED record inside");
}

TEST(PerfCompressedTest, UnknownCompressionTypeIsRefused) {
  std::string feature = testing::CompressedFeature();
  testing::Put<uint32_t>(&feature, 4, 2);  // not zstd
  RecordBuilder f(kRecordHeaderFeature);
  f.U64(format::kFeatCompressed).Bytes(feature).U32(0);
  std::vector<std::string> packed = Compress(Comm(1, "abc"), {});
  Read r = ReadBytesAsTrace(StreamHead() + f.Finish() + packed[0]);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kUnimplemented) << r.status;
  EXPECT_THAT(std::string(r.status.message()), HasSubstr("compression type 2"));
}

TEST(PerfCompressedTest, TruncatedCompressedRecordIsAnError) {
  for (const char* name : {"rules-zstd.data", "rules-zstd-pipe.data"}) {
    SCOPED_TRACE(name);
    const std::string bytes = ReadBytes(Trace(name));
    const testing::TraceParts parts = testing::SplitTrace(bytes);
    const size_t data_begin = parts.head.size();
    testing::Piece last;  // the biggest COMPRESSED record
    for (const testing::Piece& p : testing::Pieces(parts.data, parts.pipe)) {
      if (p.type == format::kRecordCompressed && p.size > last.size) last = p;
    }
    ASSERT_GT(last.size, 100u);
    const size_t cut = data_begin + last.offset + last.size / 2;
    Read r;
    if (parts.pipe) {
      r = ReadBytesAsTrace(bytes.substr(0, cut));  // the stream ends inside it
      ExpectDataLoss(r, "is truncated");
    } else {
      // The data section (per the header) ends inside it.
      testing::TraceParts cut_parts = parts;
      cut_parts.data.resize(cut - data_begin);
      r = ReadBytesAsTrace(testing::JoinTrace(cut_parts));
      ExpectDataLoss(r, "runs past the end of the data section");
    }
    EXPECT_THAT(std::string(r.status.message()),
                HasSubstr(absl::StrFormat("record at offset 0x%x", data_begin + last.offset)));
  }
}

TEST(PerfCompressedTest, RandomCorruptionOfCompressedDataDoesNotCrash) {
  // Flipped bytes inside the zstd data decode to errors or to other
  // records; either way the reader must stay inside its buffers (ASan).
  const std::string bytes = ReadBytes(Trace("rules-zstd.data"));
  const testing::TraceParts parts = testing::SplitTrace(bytes);
  const size_t data_begin = parts.head.size();
  std::vector<size_t> payload;  // file offsets of zstd bytes
  for (const testing::Piece& p : testing::Pieces(parts.data, false)) {
    if (p.type != format::kRecordCompressed) continue;
    for (size_t i = 8; i < p.size; ++i) payload.push_back(data_begin + p.offset + i);
  }
  ASSERT_GT(payload.size(), 1000u);
  std::mt19937 rng(42);
  int errors = 0;
  for (int round = 0; round < 60; ++round) {
    std::string bad = bytes;
    for (int k = 0; k < 1 + round % 4; ++k) {
      bad[payload[rng() % payload.size()]] ^= static_cast<char>(1 + rng() % 255);
    }
    Read r = ReadBytesAsTrace(bad);
    errors += !r.status.ok();
  }
  EXPECT_GT(errors, 0);
}

}  // namespace
}  // namespace pageblame::perf

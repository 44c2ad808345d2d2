// PerfReader on hand-built streams and files, for what perf 6.1 with our
// recording options does not produce: PERF_SAMPLE_IDENTIFIER, READ groups,
// PERF_ATTR_SIZE_VER0 attrs, the 12-byte HEADER_TRACING_DATA record of older
// perf, EVENT_UPDATE / HEADER_EVENT_TYPE names, build ids with a size byte,
// AUXTRACE payloads, attrs arriving after data, a misaligned data section and
// the older 72-byte file header.
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/temp_file_for_test.h"
#include "processor/perf/header_parser.h"
#include "processor/perf/perf_format.h"
#include "processor/perf/perf_reader.h"
#include "processor/perf/perf_test_builder.h"

namespace pageblame::perf {
namespace {

using ::testing::ElementsAre;
using testing::Attr;
using testing::PipeHeader;
using testing::RecordBuilder;

constexpr uint32_t kTracepoint = 2;
// Attr A: identifier first, READ group, callchain, raw.
constexpr uint64_t kTypeA = kSampleIdentifier | kSampleTid | kSampleTime | kSampleRead |
                            kSampleCallchain | kSampleRaw;
constexpr uint64_t kReadGroupIdEnabled = (1 << 3) | (1 << 2) | (1 << 0);
// Attr B/C: identifier, ip, tid, time, cpu, raw.
constexpr uint64_t kTypeB =
    kSampleIdentifier | kSampleIp | kSampleTid | kSampleTime | kSampleCpu | kSampleRaw;

std::string HeaderAttr(const std::string& attr, std::vector<uint64_t> ids) {
  RecordBuilder r(kRecordHeaderAttr);
  r.Bytes(attr);
  for (uint64_t id : ids) r.U64(id);
  return r.Finish();
}

// sample_id trailers (TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER order): the
// layout is that of the attr the trailing identifier names.
RecordBuilder& TrailerA(RecordBuilder& r, uint32_t pid, uint32_t tid, uint64_t time,
                        uint64_t id) {
  return r.U32(pid).U32(tid).U64(time).U64(id);
}
RecordBuilder& TrailerB(RecordBuilder& r, uint32_t pid, uint32_t tid, uint64_t time,
                        uint32_t cpu, uint64_t id) {
  return r.U32(pid).U32(tid).U64(time).U32(cpu).U32(0).U64(id);
}

std::string SampleB(uint64_t id, uint64_t ip, uint64_t time) {
  return RecordBuilder(kRecordSample)
      .U64(id).U64(ip).U32(5).U32(6).U64(time).U32(1).U32(0)
      .U32(12).Str("\x20\x00raw-of-B", 12)
      .Finish();
}

std::string BuildStream() {
  std::string s = PipeHeader();
  s += HeaderAttr(Attr(64, kTracepoint, 0x10, kTypeA, kReadGroupIdEnabled, true), {11, 12});
  s += HeaderAttr(Attr(128, kTracepoint, 0x20, kTypeB, 0, true), {22});
  // Old-style name table entry: u64 event_id (the tracepoint config), name[64].
  s += RecordBuilder(kRecordHeaderEventType).U64(0x10).Str("tp:first", 64).Finish();
  // perf before 6.x: a 12-byte record (no pad), the data follows outside it.
  s += RecordBuilder(kRecordHeaderTracingData).U32(16).Finish();
  s += std::string("\x17\x08\x44tracing0.6\0\0\0", 16);
  s += RecordBuilder(kRecordEventUpdate).U64(1 /*NAME*/).U64(22).Str("tp:second", 16).Finish();
  s += RecordBuilder(kRecordHeaderBuildId, 1 << 15 /*BUILD_ID_SIZE*/)
           .U32(7)
           .Str(std::string(16, '\xab'), 20).U8(16).U8(0).U16(0)
           .Str("/lib/x.so", 16)
           .Finish();
  s += RecordBuilder(kRecordHeaderFeature).U64(3 /*HOSTNAME*/).U32(8).Str("myhost", 8).Finish();
  s += RecordBuilder(kRecordHeaderFeature).U64(7 /*NRCPUS*/).U32(6).U32(4).Finish();
  s += RecordBuilder(69 /*ID_INDEX*/).U64(0).Finish();
  {
    RecordBuilder comm(kRecordComm, kMiscCommExec);
    comm.U32(5).U32(6).Str("prog", 8);
    s += TrailerB(comm, 5, 6, 1000, 1, 22).Finish();
  }
  s += RecordBuilder(kRecordSample)
           .U64(12)                          // IDENTIFIER
           .U32(5).U32(6)                    // TID
           .U64(2000)                        // TIME
           .U64(2).U64(50)                   // READ: nr, time_enabled
           .U64(1).U64(11).U64(3).U64(12)    //   {value, id} x 2
           .U64(2).U64(kContextUser).U64(0x401000)  // CALLCHAIN
           .U32(4).Str("\x10\x00xy", 4)      // RAW
           .Finish();
  s += SampleB(22, 0x1234, 3000);
  s += RecordBuilder(40).U64(1).Finish();  // a kernel record type we do not know
  s += RecordBuilder(kRecordFinishedRound).Finish();
  s += HeaderAttr(Attr(128, kTracepoint, 0x30, kTypeB, 0, true), {33});  // late
  s += SampleB(33, 0x5678, 4000);
  s += RecordBuilder(71 /*AUXTRACE*/).U64(24).U64(0).U64(0).U32(0).U32(0).U32(0).U32(0).Finish();
  s += std::string(24, '\x99');  // the AUX payload
  {
    RecordBuilder lost(kRecordLost);
    lost.U64(11).U64(5);
    s += TrailerA(lost, 5, 6, 5000, 11).Finish();
  }
  {
    // perf's synthesized records carry id 0 in the trailer.
    RecordBuilder lost(kRecordLostSamples);
    lost.U64(3);
    s += TrailerA(lost, 0, 0, 0, 0).Finish();
  }
  return s;
}

void CheckStream(PerfReader& r, uint64_t stream_size) {
  const FileInfo& info = r.info();
  EXPECT_TRUE(info.pipe_mode);
  ASSERT_EQ(info.attrs.size(), 2u);
  EXPECT_EQ(info.attrs[0].name, "tp:first");
  EXPECT_EQ(info.attrs[1].name, "tp:second");
  EXPECT_THAT(info.attrs[0].ids, ElementsAre(11, 12));
  EXPECT_EQ(info.attrs[0].sample_type, kTypeA);
  EXPECT_EQ(info.attrs[0].read_format, kReadGroupIdEnabled);
  EXPECT_TRUE(info.attrs[0].sample_id_all);
  EXPECT_EQ(info.tracing_data, std::string("\x17\x08\x44tracing0.6\0\0\0", 16));
  ASSERT_EQ(info.build_ids.size(), 1u);
  EXPECT_EQ(info.build_ids[0].pid, 7);
  EXPECT_EQ(info.build_ids[0].build_id, std::string(16, '\xab'));
  EXPECT_EQ(info.build_ids[0].filename, "/lib/x.so");
  EXPECT_EQ(info.hostname, "myhost");
  EXPECT_EQ(info.nr_cpus, 6u);  // available, not online

  RawRecord rec;
  auto next = [&]() {
    auto more = r.Next(&rec);
    EXPECT_TRUE(more.ok()) << more.status();
    return more.ok() && *more;
  };

  ASSERT_TRUE(next());
  ASSERT_EQ(rec.type, kRecordComm);
  CommRecord comm;
  ASSERT_TRUE(r.ParseComm(rec, &comm).ok());
  EXPECT_EQ(comm.comm, "prog");
  EXPECT_TRUE(comm.exec);
  EXPECT_EQ(comm.sample_id.pid, 5u);
  EXPECT_EQ(comm.sample_id.time, 1000u);

  ASSERT_TRUE(next());
  Sample s;
  ASSERT_TRUE(r.ParseSample(rec, &s).ok());
  EXPECT_EQ(s.attr, &info.attrs[0]);  // id 12 -> attr A
  EXPECT_EQ(s.time, 2000u);
  EXPECT_THAT(s.callchain, ElementsAre(kContextUser, 0x401000u));
  ASSERT_EQ(s.raw.size(), 4u);
  EXPECT_EQ(s.raw[0], 0x10);

  ASSERT_TRUE(next());
  ASSERT_TRUE(r.ParseSample(rec, &s).ok());
  EXPECT_EQ(s.attr->name, "tp:second");
  EXPECT_EQ(s.ip, 0x1234u);
  EXPECT_EQ(s.cpu, 1u);
  EXPECT_EQ(s.raw.size(), 12u);

  ASSERT_TRUE(next());
  EXPECT_EQ(rec.type, 40u);  // unknown records are handed out as they are
  CommRecord not_comm;
  EXPECT_EQ(r.ParseComm(rec, &not_comm).code(), absl::StatusCode::kInvalidArgument);

  ASSERT_TRUE(next());
  EXPECT_EQ(rec.type, kRecordFinishedRound);

  ASSERT_TRUE(next());  // after the late HEADER_ATTR
  ASSERT_EQ(info.attrs.size(), 3u);
  ASSERT_TRUE(r.ParseSample(rec, &s).ok());
  EXPECT_EQ(s.attr, &info.attrs[2]);
  EXPECT_EQ(s.ip, 0x5678u);

  ASSERT_TRUE(next());  // the AUXTRACE record and its payload were skipped
  ASSERT_EQ(rec.type, kRecordLost);
  LostRecord lost;
  ASSERT_TRUE(r.ParseLost(rec, &lost).ok());
  EXPECT_FALSE(lost.samples);
  EXPECT_EQ(lost.id, 11u);
  EXPECT_EQ(lost.lost, 5u);
  EXPECT_EQ(lost.sample_id.time, 5000u);

  ASSERT_TRUE(next());
  ASSERT_TRUE(r.ParseLost(rec, &lost).ok());
  EXPECT_TRUE(lost.samples);
  EXPECT_EQ(lost.lost, 3u);

  EXPECT_FALSE(next());
  EXPECT_EQ(r.bytes_read(), stream_size);
}

TEST(PerfSyntheticTest, PipeStream) {
  const std::string stream = BuildStream();
  TempFile f(stream);
  auto reader = PerfReader::Open(f.path());
  ASSERT_TRUE(reader.ok()) << reader.status();
  CheckStream(**reader, stream.size());
}

TEST(PerfSyntheticTest, ShortNrCpusFeatureIsAnError) {
  // LaneSorter trusts the CPU count: a cut section must not read as 0 or junk.
  const uint8_t four[4] = {2, 0, 0, 0};
  FileInfo info;
  absl::Status st = ParseFeature(format::kFeatNrCpus, absl::MakeConstSpan(four), &info);
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(st.message()), ::testing::HasSubstr("4 bytes, expected 8"));
}

TEST(PerfSyntheticTest, UnknownSampleIdIsAnError) {
  std::string stream = PipeHeader();
  stream += HeaderAttr(Attr(128, kTracepoint, 0x20, kTypeB, 0, true), {22});
  stream += HeaderAttr(Attr(128, kTracepoint, 0x21, kTypeB, 0, true), {23});
  stream += SampleB(44, 0x1, 1);
  TempFile f(stream);
  auto reader = PerfReader::Open(f.path());
  ASSERT_TRUE(reader.ok());
  RawRecord rec;
  ASSERT_TRUE(*(*reader)->Next(&rec));
  Sample s;
  absl::Status st = (*reader)->ParseSample(rec, &s);
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(st.message()), ::testing::HasSubstr("unknown id 44"));
}

// A file-mode perf.data assembled by hand: 104- or 72-byte header, one VER0
// attr with two ids, a data section at an offset that is 4 but not 8 aligned
// (so callchains are misaligned in the mapping), HOSTNAME + CMDLINE features.
std::string BuildFile(bool with_features) {
  const std::string attr = Attr(64, kTracepoint, 0x42, kSampleTid | kSampleCallchain | kSampleRaw,
                                0, false);
  const size_t header_size = with_features ? 104 : 72;
  const size_t attrs_offset = header_size;
  const size_t attrs_size = attr.size() + 16;
  const size_t ids_offset = attrs_offset + attrs_size;
  const size_t data_offset = ids_offset + 16 + 4;  // misaligned on purpose
  std::string data = RecordBuilder(kRecordSample)
                         .U32(9).U32(10)
                         .U64(2).U64(kContextUser).U64(0xabc)
                         .U32(4).Str("\x42\x00zz", 4)
                         .Finish();
  data += RecordBuilder(kRecordComm).U32(9).U32(10).Str("x", 8).Finish();  // no trailer
  std::string features;
  std::string table;
  if (with_features) {
    const size_t table_offset = data_offset + data.size();
    const size_t first = table_offset + 2 * 16;
    std::string host = std::string("\x08\0\0\0", 4) + std::string("box\0\0\0\0\0", 8);
    std::string cmd = std::string("\x02\0\0\0", 4) + std::string("\x04\0\0\0", 4) + "rec" +
                      std::string(1, '\0') + std::string("\x04\0\0\0", 4) + "-g" +
                      std::string(2, '\0');
    auto section = [&](uint64_t off, uint64_t size) {
      table.append(reinterpret_cast<const char*>(&off), 8);
      table.append(reinterpret_cast<const char*>(&size), 8);
    };
    section(first, host.size());
    section(first + host.size(), cmd.size());
    features = host + cmd;
  }
  std::string f = "PERFILE2";
  auto u64 = [&](uint64_t v) { f.append(reinterpret_cast<const char*>(&v), 8); };
  u64(header_size);
  u64(attrs_size);  // attr_size: one perf_file_attr
  u64(attrs_offset);
  u64(attrs_size);
  u64(data_offset);
  u64(data.size());
  u64(0);
  u64(0);  // event_types
  if (with_features) {
    u64((1ULL << 3) | (1ULL << 11));  // HOSTNAME, CMDLINE
    u64(0);
    u64(0);
    u64(0);
  }
  f += attr;
  u64(ids_offset);
  u64(16);
  u64(1001);
  u64(1002);
  f += std::string(4, '\0');
  f += data + table + features;
  return f;
}

TEST(PerfSyntheticTest, HandBuiltFile) {
  for (bool with_features : {true, false}) {
    TempFile f(BuildFile(with_features));
    auto reader = PerfReader::Open(f.path());
    ASSERT_TRUE(reader.ok()) << reader.status();
    PerfReader& r = **reader;
    ASSERT_EQ(r.info().attrs.size(), 1u);
    EXPECT_THAT(r.info().attrs[0].ids, ElementsAre(1001, 1002));
    EXPECT_EQ(r.info().attrs[0].sample_regs_user, 0u);  // not in a VER0 attr
    if (with_features) {
      EXPECT_EQ(r.info().hostname, "box");
      EXPECT_THAT(r.info().cmdline, ElementsAre("rec", "-g"));
    } else {
      EXPECT_TRUE(r.info().hostname.empty());
    }
    RawRecord rec;
    ASSERT_TRUE(*r.Next(&rec));
    Sample s;
    ASSERT_TRUE(r.ParseSample(rec, &s).ok());  // the only attr, no ids needed
    EXPECT_EQ(s.pid, 9u);
    EXPECT_THAT(s.callchain, ElementsAre(kContextUser, 0xabcu));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(s.callchain.data()) % 8, 0u);
    ASSERT_TRUE(*r.Next(&rec));
    CommRecord c;
    ASSERT_TRUE(r.ParseComm(rec, &c).ok());
    EXPECT_EQ(c.comm, "x");
    EXPECT_FALSE(c.sample_id.has_time);  // sample_id_all is off
    EXPECT_FALSE(*r.Next(&rec));
  }
}

}  // namespace
}  // namespace pageblame::perf

// Reads the checked-in fixtures of testdata/ (recorded by testdata/record.sh)
// and checks what PerfReader sees against what perf 6.1 itself says about the
// same files. Every expected value below was taken from perf's output, not
// from ours:
//   perf report -D -i F        record offsets/types, sample pid/tid/time/cpu/
//                              ip and raw callchains, "Aggregated stats"
//   perf script -i F -F event  samples per event name
//   perf report --header-only  names, ids, data size, hostname, cmdline, ...
//   perf buildid-list -i F     the BUILD_ID feature
#include "processor/base/format.h"
#include "processor/perf/perf_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pageblame::perf {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;
using ::testing::StartsWith;
using ::testing::UnorderedElementsAre;

std::string Fixture(const std::string& name) {
  return std::string(PAGEBLAME_SOURCE_DIR) + "/processor/perf/testdata/" + name;
}

// What one pass over a trace sees.
struct Summary {
  std::map<uint32_t, int> records_by_type;
  std::map<std::string, int> samples_by_event;
  int records = 0;
};

Summary ReadAll(PerfReader& reader) {
  Summary s;
  RawRecord rec;
  while (true) {
    absl::StatusOr<bool> more = reader.Next(&rec);
    EXPECT_TRUE(more.ok()) << more.status();
    if (!more.ok() || !*more) break;
    ++s.records;
    ++s.records_by_type[rec.type];
    if (rec.type == kRecordSample) {
      Sample sample;
      absl::Status st = reader.ParseSample(rec, &sample);
      EXPECT_TRUE(st.ok()) << st;
      if (!st.ok()) continue;
      ++s.samples_by_event[sample.attr->name];
      // The kernel starts every tracepoint payload with common_type, the
      // tracepoint's id, which is also its attr.config: this checks both the
      // sample -> attr mapping and where RAW was found.
      uint16_t common_type = 0;
      EXPECT_GE(sample.raw.size(), 2u);
      if (sample.raw.size() >= 2) memcpy(&common_type, sample.raw.data(), 2);
      EXPECT_EQ(common_type, sample.attr->config) << "sample at " << rec.offset;
    }
  }
  return s;
}

std::string Hex(std::string_view bytes) {
  return absl::BytesToHexString(absl::string_view(bytes.data(), bytes.size()));
}

// "perf trace record" output: file mode, 10 tracepoints incl. raw_syscalls.
TEST(PerfReaderTest, TraceRecordHeader) {
  auto reader = PerfReader::Open(Fixture("trace_record.data"));
  ASSERT_TRUE(reader.ok()) << reader.status();
  const FileInfo& info = (*reader)->info();
  EXPECT_FALSE(info.pipe_mode);
  EXPECT_EQ(info.data_size, 21768u);  // "# data size : 21768"
  EXPECT_EQ(info.hostname, "vm");
  EXPECT_EQ(info.os_release, "6.18.44-fc-v657");
  EXPECT_EQ(info.perf_version, "6.1.187");
  EXPECT_EQ(info.arch, "x86_64");
  EXPECT_EQ(info.nr_cpus, 2u);  // "# nrcpus avail : 2"
  ASSERT_EQ(info.cmdline.size(), 10u);
  EXPECT_EQ(info.cmdline[0], "/usr/bin/perf");
  EXPECT_EQ(info.cmdline[1], "trace");
  EXPECT_EQ(info.cmdline[9], "./mmap_prog");

  std::vector<std::string> names;
  for (const EventAttr& a : info.attrs) names.push_back(a.name);
  EXPECT_THAT(names, ElementsAre("raw_syscalls:sys_enter", "raw_syscalls:sys_exit",
                                 "syscalls:sys_exit_mmap", "syscalls:sys_enter_mmap",
                                 "syscalls:sys_exit_munmap", "syscalls:sys_enter_munmap",
                                 "syscalls:sys_exit_brk", "syscalls:sys_enter_brk",
                                 "syscalls:sys_exit_mremap", "syscalls:sys_enter_mremap"));
  const EventAttr& enter = info.attrs[0];
  EXPECT_EQ(enter.type, 2u);  // PERF_TYPE_TRACEPOINT
  EXPECT_EQ(enter.config, 0x1bbu);
  // IP|TID|TIME|CALLCHAIN|ID|CPU|PERIOD|RAW, read_format ID|LOST.
  EXPECT_EQ(enter.sample_type, kSampleIp | kSampleTid | kSampleTime | kSampleCallchain |
                                   kSampleId | kSampleCpu | kSamplePeriod | kSampleRaw);
  EXPECT_EQ(enter.read_format, (1u << 2) | (1u << 4));
  EXPECT_TRUE(enter.sample_id_all);
  EXPECT_THAT(enter.ids, ElementsAre(187, 188));
  EXPECT_THAT(info.attrs[9].ids, ElementsAre(205, 206));
  EXPECT_EQ(info.attrs[9].config, 0x2c3u);
  EXPECT_EQ((*reader)->AttrForId(193), &info.attrs[3]);
  EXPECT_EQ((*reader)->AttrForId(194), &info.attrs[3]);
  EXPECT_EQ((*reader)->AttrForId(1), nullptr);

  // perf buildid-list -i trace_record.data
  std::vector<std::pair<std::string, std::string>> ids;
  for (const BuildIdEntry& b : info.build_ids) ids.emplace_back(Hex(b.build_id), b.filename);
  EXPECT_THAT(ids, UnorderedElementsAre(
      Pair("48dc540c8b76393804ca8088dbfa7d42911a9444", "[kernel.kallsyms]"),
      Pair("7ebc65e52f2bbea498b4040fa92f7238377aaba9",
           "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"),
      Pair("e025128345ce65b719dab776555f2b64ee0204a1", "[vdso]"),
      Pair("93ac61ec5a8eb1396f9fbd350e3169a558528a40", "/usr/lib/x86_64-linux-gnu/libc.so.6")));
  // The tracing data starts with the trace-cmd/perf magic "\x17\x08\x44tracing".
  EXPECT_THAT(info.tracing_data, StartsWith("\x17\x08\x44tracing"));
}

TEST(PerfReaderTest, TraceRecordRecords) {
  auto reader = PerfReader::Open(Fixture("trace_record.data"));
  ASSERT_TRUE(reader.ok()) << reader.status();
  Summary s = ReadAll(**reader);
  // perf report -D "Aggregated stats" (ID_INDEX, THREAD_MAP and CPU_MAP are
  // perf's own records, which Next() does not return).
  EXPECT_THAT(s.records_by_type,
              UnorderedElementsAre(Pair(kRecordMmap, 1), Pair(kRecordComm, 2),
                                   Pair(kRecordExit, 2), Pair(kRecordFork, 1),
                                   Pair(kRecordSample, 118), Pair(kRecordMmap2, 4),
                                   Pair(kRecordFinishedRound, 1), Pair(kRecordFinishedInit, 1)));
  // perf script -F event | sort | uniq -c
  EXPECT_THAT(s.samples_by_event,
              UnorderedElementsAre(Pair("raw_syscalls:sys_enter", 41),
                                   Pair("raw_syscalls:sys_exit", 41),
                                   Pair("syscalls:sys_enter_brk", 3),
                                   Pair("syscalls:sys_exit_brk", 3),
                                   Pair("syscalls:sys_enter_mmap", 11),
                                   Pair("syscalls:sys_exit_mmap", 11),
                                   Pair("syscalls:sys_enter_mremap", 1),
                                   Pair("syscalls:sys_exit_mremap", 1),
                                   Pair("syscalls:sys_enter_munmap", 3),
                                   Pair("syscalls:sys_exit_munmap", 3)));
  EXPECT_EQ((*reader)->bytes_read(), (*reader)->info().data_size);
}

TEST(PerfReaderTest, KnownSampleAttrAgreesWithSampleAttrOnceAnIdIsSeen) {
  auto reader = PerfReader::Open(Fixture("trace_record.data"));
  ASSERT_TRUE(reader.ok()) << reader.status();
  PerfReader& r = **reader;
  std::map<const EventAttr*, int> known;  // samples the fast path answered
  RawRecord rec;
  int samples = 0;
  while (true) {
    absl::StatusOr<bool> more = r.Next(&rec);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
    const EventAttr* fast = r.KnownSampleAttr(rec);
    if (rec.type != kRecordSample) {
      EXPECT_EQ(fast, nullptr) << "record type " << rec.type << " at " << rec.offset;
      continue;
    }
    ++samples;
    absl::StatusOr<const EventAttr*> slow = r.SampleAttr(rec);
    ASSERT_TRUE(slow.ok()) << slow.status();
    if (fast != nullptr) {
      EXPECT_EQ(fast, *slow) << "sample at " << rec.offset;
      ++known[fast];
    }
  }
  // Only the first sample of each id needs SampleAttr (which fills the
  // cache): every other one is answered inline. The kernel gives an event
  // one id per CPU, so an event can miss once per CPU it fired on.
  ASSERT_EQ(samples, 118);
  size_t ids = 0;
  for (const EventAttr& a : r.info().attrs) ids += a.ids.size();
  int answered = 0;
  for (const auto& [attr, n] : known) answered += n;
  EXPECT_GE(answered, samples - static_cast<int>(ids));
  EXPECT_LT(answered, samples);
  EXPECT_GE(known.size(), 8u);  // all but the two one-sample events (mremap's)
  // A sample too short to hold its id is not answered inline either.
  RawRecord cut = rec;
  cut.type = kRecordSample;
  cut.bytes = cut.bytes.subspan(0, 8);
  EXPECT_EQ(r.KnownSampleAttr(cut), nullptr);
}

TEST(PerfReaderTest, TraceRecordFirstSampleAndSideband) {
  auto reader = PerfReader::Open(Fixture("trace_record.data"));
  ASSERT_TRUE(reader.ok()) << reader.status();
  PerfReader& r = **reader;
  RawRecord rec;
  bool seen_sample = false, seen_fork = false, seen_exec = false, seen_libc = false;
  int exits = 0;
  const uint8_t* first = nullptr;
  uint64_t first_offset = 0;
  while (true) {
    auto more = r.Next(&rec);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
    // Zero-copy: records are views into one mapping of the file.
    if (first == nullptr) {
      first = rec.bytes.data();
      first_offset = rec.offset;
    }
    EXPECT_EQ(rec.bytes.data() - first, static_cast<ptrdiff_t>(rec.offset - first_offset));
    if (rec.type == kRecordSample && !seen_sample) {
      seen_sample = true;
      // perf report -D: "0 375585857208 0xbd8 [0x98]: PERF_RECORD_SAMPLE(IP,
      // 0x1): 4501/4501: 0xffffffff81415591", FP chain nr:7 as listed.
      EXPECT_EQ(rec.offset, 0xbd8u);
      EXPECT_EQ(rec.bytes.size(), 0x98u);
      Sample s;
      ASSERT_TRUE(r.ParseSample(rec, &s).ok());
      EXPECT_EQ(s.attr->name, "raw_syscalls:sys_exit");  // perf script, first line
      EXPECT_EQ(s.pid, 4501u);
      EXPECT_EQ(s.tid, 4501u);
      EXPECT_EQ(s.time, 375585857208u);
      EXPECT_EQ(s.cpu, 0u);
      EXPECT_EQ(s.ip, 0xffffffff81415591u);
      EXPECT_THAT(s.callchain,
                  ElementsAre(kContextKernel, 0xffffffff81415591u, 0xffffffff81415e9cu,
                              0xffffffff821ed6ceu, 0xffffffff81000130u, kContextUser,
                              0x00007ff2cec01b70u));
      // perf report -D raw dump, bytes 0x20..0x27: "bd 00 00 00 00 00 00 00".
      EXPECT_EQ(s.id, 189u);
    }
    if (rec.type == kRecordComm && rec.offset == 0xa18) {
      // "0 375585729297 0xa18 [0x40]: PERF_RECORD_COMM exec: mmap_prog:4501/4501"
      seen_exec = true;
      CommRecord c;
      ASSERT_TRUE(r.ParseComm(rec, &c).ok());
      EXPECT_EQ(c.comm, "mmap_prog");
      EXPECT_TRUE(c.exec);
      EXPECT_EQ(c.pid, 4501u);
      EXPECT_EQ(c.tid, 4501u);
      EXPECT_TRUE(c.sample_id.has_time);
      EXPECT_EQ(c.sample_id.time, 375585729297u);
    }
    if (rec.type == kRecordComm && rec.offset == 0x9d0) {
      // "0 0 0x9d0 [0x40]: PERF_RECORD_COMM: perf-exec:4501/4501" (no exec)
      CommRecord c;
      ASSERT_TRUE(r.ParseComm(rec, &c).ok());
      EXPECT_EQ(c.comm, "perf-exec");
      EXPECT_FALSE(c.exec);
    }
    if (rec.type == kRecordFork) {
      // "0 375587309694 0x5070 [0x40]: PERF_RECORD_FORK(4503:4503):(4501:4501)"
      seen_fork = true;
      TaskRecord t;
      ASSERT_TRUE(r.ParseTask(rec, &t).ok());
      EXPECT_EQ(rec.offset, 0x5070u);
      EXPECT_EQ(t.pid, 4503u);
      EXPECT_EQ(t.tid, 4503u);
      EXPECT_EQ(t.ppid, 4501u);
      EXPECT_EQ(t.ptid, 4501u);
      EXPECT_EQ(t.sample_id.time, 375587309694u);
      EXPECT_NE(t.time, 0u);
    }
    if (rec.type == kRecordExit) {
      TaskRecord t;
      ASSERT_TRUE(r.ParseTask(rec, &t).ok());
      if (++exits == 2) {
        // "1 375587896980 0x5b68 [0x40]: PERF_RECORD_EXIT(4501:4501):(4500:4500)"
        EXPECT_EQ(t.pid, 4501u);
        EXPECT_EQ(t.ppid, 4500u);
        EXPECT_EQ(t.sample_id.time, 375587896980u);
      }
    }
    if (rec.type == kRecordMmap2 && rec.offset == 0x2548) {
      // "0 375586426437 0x2548 [0x90]: PERF_RECORD_MMAP2 4501/4501:
      //  [0x7ff2cea15000(0x156000) @ 0x26000 fe:00 332835 0]: r-xp .../libc.so.6"
      seen_libc = true;
      MmapRecord m;
      ASSERT_TRUE(r.ParseMmap(rec, &m).ok());
      EXPECT_EQ(m.pid, 4501u);
      EXPECT_EQ(m.start, 0x7ff2cea15000u);
      EXPECT_EQ(m.len, 0x156000u);
      EXPECT_EQ(m.pgoff, 0x26000u);
      EXPECT_TRUE(m.has_prot);
      EXPECT_EQ(m.prot, 5u);   // PROT_READ|PROT_EXEC: "r-x"
      EXPECT_EQ(m.flags & 3, 2u);  // MAP_PRIVATE: "p"
      EXPECT_EQ(m.filename, "/usr/lib/x86_64-linux-gnu/libc.so.6");
      EXPECT_TRUE(m.build_id.empty());
      EXPECT_EQ(m.cpumode, kMiscUser);
      EXPECT_EQ(m.sample_id.time, 375586426437u);
    }
    if (rec.type == kRecordMmap) {
      // "PERF_RECORD_MMAP -1/0: [0xffffffff81000000(0x1209988) @
      //  0xffffffff81000000]: x [kernel.kallsyms]_text" (synthesized: time 0)
      MmapRecord m;
      ASSERT_TRUE(r.ParseMmap(rec, &m).ok());
      EXPECT_EQ(m.pid, static_cast<uint32_t>(-1));
      EXPECT_EQ(m.start, 0xffffffff81000000u);
      EXPECT_EQ(m.len, 0x1209988u);
      EXPECT_FALSE(m.has_prot);
      EXPECT_EQ(m.prot, 4u);  // "x": not a data mapping
      EXPECT_EQ(m.filename, "[kernel.kallsyms]_text");
      EXPECT_EQ(m.cpumode, kMiscKernel);
      EXPECT_EQ(m.sample_id.time, 0u);
    }
  }
  EXPECT_TRUE(seen_sample && seen_fork && seen_exec && seen_libc);
  EXPECT_EQ(exits, 2);
}

TEST(PerfReaderTest, PerfRecordFile) {
  auto reader = PerfReader::Open(Fixture("record_g.data"));
  ASSERT_TRUE(reader.ok()) << reader.status();
  const FileInfo& info = (*reader)->info();
  EXPECT_EQ(info.data_size, 5304u);
  ASSERT_EQ(info.attrs.size(), 4u);
  EXPECT_EQ(info.attrs[2].name, "syscalls:sys_enter_munmap");
  EXPECT_THAT(info.attrs[2].ids, ElementsAre(238, 239));
  EXPECT_EQ(info.build_ids.size(), 3u);  // perf buildid-list: ld.so, [vdso], libc
  Summary s = ReadAll(**reader);
  EXPECT_THAT(s.samples_by_event,
              UnorderedElementsAre(Pair("syscalls:sys_enter_mmap", 11),
                                   Pair("syscalls:sys_exit_mmap", 11),
                                   Pair("syscalls:sys_enter_munmap", 3),
                                   Pair("syscalls:sys_exit_munmap", 3)));
  EXPECT_EQ(s.records, 1 + 2 + 2 + 1 + 28 + 4 + 1 + 1);
}

// perf record -k mono writes HEADER_CLOCK_DATA (header.c write_clock_data:
// u32 version, u32 clockid, u64 wall-clock ns, u64 clockid ns, read as the
// recording began): the recording's start, which side files are checked
// against. Values read from the file with Python's struct; perf script puts
// the first sample at 12502.226003, after it.
TEST(PerfReaderTest, ClockDataGivesTheRecordingsStart) {
  auto reader = PerfReader::Open(std::string(PAGEBLAME_SOURCE_DIR) + "/traces/residency.data");
  ASSERT_TRUE(reader.ok()) << reader.status();
  const FileInfo& info = (*reader)->info();
  ASSERT_TRUE(info.clock_start.has_value());
  EXPECT_EQ(*info.clock_start, 12502044145007u);
  EXPECT_EQ(info.clock_start_clockid, 1);
  EXPECT_EQ(info.clock_start_wall, 1795727703959727000u);
}

// perf record --buildid-mmap: MMAP2 records carry build ids instead of
// device/inode, and a single event.
TEST(PerfReaderTest, BuildIdMmap2) {
  auto reader = PerfReader::Open(Fixture("buildid_mmap.data"));
  ASSERT_TRUE(reader.ok()) << reader.status();
  PerfReader& r = **reader;
  ASSERT_EQ(r.info().attrs.size(), 1u);
  EXPECT_TRUE(r.info().build_ids.empty());  // "missing features: BUILD_ID ..."
  std::map<std::string, std::string> build_ids;  // filename -> hex
  RawRecord rec;
  int samples = 0;
  while (true) {
    auto more = r.Next(&rec);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
    if (rec.type == kRecordMmap2) {
      MmapRecord m;
      ASSERT_TRUE(r.ParseMmap(rec, &m).ok());
      build_ids[std::string(m.filename)] = Hex(m.build_id);
      if (m.filename == "/tmp/mmap_prog") {
        // "0 379685499106 0x280 [0x70]: PERF_RECORD_MMAP2 4513/4513:
        //  [0x555da4ee8000(0x1000) @ 0x1000 <a7330c6d...>]: r-xp /tmp/mmap_prog"
        EXPECT_EQ(m.start, 0x555da4ee8000u);
        EXPECT_EQ(m.len, 0x1000u);
        EXPECT_EQ(m.prot, 5u);
        EXPECT_EQ(m.sample_id.time, 379685499106u);
      }
    }
    if (rec.type == kRecordSample) {
      Sample s;
      ASSERT_TRUE(r.ParseSample(rec, &s).ok());
      if (++samples == 1) {
        // "1 379686025070 0x470 [0x80]: PERF_RECORD_SAMPLE(IP, 0x2): 4513/4513:
        //  0x7f3b46a94ce7", FP chain nr:4
        EXPECT_EQ(rec.offset, 0x470u);
        EXPECT_EQ(s.time, 379686025070u);
        EXPECT_EQ(s.ip, 0x7f3b46a94ce7u);
        EXPECT_EQ(s.callchain.size(), 4u);
        EXPECT_EQ(s.callchain[0], kContextUser);
      }
    }
  }
  EXPECT_EQ(samples, 3);
  EXPECT_THAT(build_ids,
              UnorderedElementsAre(
                  Pair("[kernel.kallsyms]_text", "48dc540c8b76393804ca8088dbfa7d42911a9444"),
                  Pair("/tmp/mmap_prog", "a7330c6dd04397dfd4a95297adf000e1d8d4315b"),
                  Pair("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
                       "7ebc65e52f2bbea498b4040fa92f7238377aaba9"),
                  Pair("[vdso]", ""),  // "@ 0 00:00 0 0": no build id
                  Pair("/usr/lib/x86_64-linux-gnu/libc.so.6",
                       "93ac61ec5a8eb1396f9fbd350e3169a558528a40")));
}

void CheckPipeFixture(PerfReader& r) {
  const FileInfo& info = r.info();
  EXPECT_TRUE(info.pipe_mode);
  EXPECT_EQ(info.data_size, 0u);
  // perf report --header-only -i pipe.data (names come from the pipe's
  // EVENT_DESC feature record)
  ASSERT_EQ(info.attrs.size(), 4u);
  EXPECT_EQ(info.attrs[0].name, "syscalls:sys_enter_mmap");
  EXPECT_EQ(info.attrs[3].name, "syscalls:sys_exit_brk");
  EXPECT_THAT(info.attrs[0].ids, ElementsAre(257, 258));
  EXPECT_THAT(info.attrs[3].ids, ElementsAre(263, 264));
  EXPECT_EQ(info.attrs[3].config, 0x2b6u);
  EXPECT_EQ(info.hostname, "vm");
  EXPECT_EQ(info.perf_version, "6.1.187");
  ASSERT_GE(info.cmdline.size(), 7u);
  EXPECT_EQ(info.cmdline[6], "-");  // "-o -"
  EXPECT_THAT(info.tracing_data, StartsWith("\x17\x08\x44tracing"));
  EXPECT_EQ(info.tracing_data.size() % 8, 0u);  // perf pads it in pipe mode

  RawRecord rec;
  Summary s;
  const uint8_t* buffer = nullptr;
  bool first_sample = true;
  while (true) {
    auto more = r.Next(&rec);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
    // Every record lands in the same reused buffer.
    if (buffer == nullptr) buffer = rec.bytes.data();
    EXPECT_EQ(rec.bytes.data(), buffer);
    ++s.records_by_type[rec.type];
    if (rec.type == kRecordSample) {
      Sample sample;
      ASSERT_TRUE(r.ParseSample(rec, &sample).ok());
      ++s.samples_by_event[sample.attr->name];
      if (first_sample) {
        first_sample = false;
        // perf report -D: "0 378353720211 0x2edc [0x78]: PERF_RECORD_SAMPLE(IP,
        // 0x2): 4509/4509: 0x7fecc334bc47", chain fffffffffffffe00
        // 7fecc334bc47 7fecc3346b78. perf prints pipe offsets without the
        // 16-byte pipe header; ours are stream offsets.
        EXPECT_EQ(rec.offset, 0x2edcu + 16);
        EXPECT_EQ(sample.attr->name, "syscalls:sys_enter_brk");
        EXPECT_EQ(sample.pid, 4509u);
        EXPECT_EQ(sample.time, 378353720211u);
        EXPECT_THAT(sample.callchain,
                    ElementsAre(kContextUser, 0x7fecc334bc47u, 0x7fecc3346b78u));
      }
    }
    if (rec.type == kRecordFork) {
      // "0 378354711340 0x3dac [0x40]: PERF_RECORD_FORK(4511:4511):(4509:4509)"
      TaskRecord t;
      ASSERT_TRUE(r.ParseTask(rec, &t).ok());
      EXPECT_EQ(t.pid, 4511u);
      EXPECT_EQ(t.ppid, 4509u);
      EXPECT_EQ(t.sample_id.time, 378354711340u);
    }
  }
  // perf report -D "Aggregated stats" and perf script -F event.
  EXPECT_THAT(s.records_by_type,
              UnorderedElementsAre(Pair(kRecordMmap, 1), Pair(kRecordComm, 2),
                                   Pair(kRecordExit, 2), Pair(kRecordFork, 1),
                                   Pair(kRecordSample, 28), Pair(kRecordMmap2, 4),
                                   Pair(kRecordFinishedRound, 1), Pair(kRecordFinishedInit, 1)));
  EXPECT_THAT(s.samples_by_event,
              UnorderedElementsAre(Pair("syscalls:sys_enter_mmap", 11),
                                   Pair("syscalls:sys_exit_mmap", 11),
                                   Pair("syscalls:sys_enter_brk", 3),
                                   Pair("syscalls:sys_exit_brk", 3)));
  struct stat st;
  ASSERT_EQ(stat(Fixture("pipe.data").c_str(), &st), 0);
  EXPECT_EQ(r.bytes_read(), static_cast<uint64_t>(st.st_size));
}

TEST(PerfReaderTest, PipeModeFromFile) {
  auto reader = PerfReader::Open(Fixture("pipe.data"));
  ASSERT_TRUE(reader.ok()) << reader.status();
  CheckPipeFixture(**reader);
}

TEST(PerfReaderTest, PipeModeFromStdin) {
  int saved = dup(STDIN_FILENO);
  int fd = open(Fixture("pipe.data").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(dup2(fd, STDIN_FILENO), STDIN_FILENO);
  close(fd);
  {
    auto reader = PerfReader::Open("-");
    ASSERT_TRUE(reader.ok()) << reader.status();
    CheckPipeFixture(**reader);
  }
  dup2(saved, STDIN_FILENO);
  close(saved);
}

TEST(PerfReaderTest, PipeModeFromFifo) {
  char dir[] = "/tmp/pb_perf_fifo_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string fifo = std::string(dir) + "/stream";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] {
    FILE* in = fopen(Fixture("pipe.data").c_str(), "rb");
    FILE* out = fopen(fifo.c_str(), "wb");
    char buf[1000];  // small writes: the reader sees partial reads
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0) fwrite(buf, 1, n, out);
    fclose(out);
    fclose(in);
  });
  {
    auto reader = PerfReader::Open(fifo);
    ASSERT_TRUE(reader.ok()) << reader.status();
    CheckPipeFixture(**reader);
  }
  writer.join();
  unlink(fifo.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace pageblame::perf

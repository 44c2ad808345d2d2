#include "processor/decode/tracing_data.h"

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/perf/perf_reader.h"

namespace pageblame::decode {
namespace {

using ::testing::HasSubstr;

std::string Format(const std::string& name, int id, const std::string& print_fmt) {
  return "name: " + name + "\nID: " + std::to_string(id) +
         "\nformat:\n"
         "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
         "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
         "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
         "\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n\n"
         "print fmt: " + print_fmt + "\n";
}

// The TRACING_DATA container as perf's trace-event-info.c writes it.
class Builder {
 public:
  Builder() {
    out_.append("\x17\x08\x44tracing", 10);
    out_.append("0.6", 4);  // with its NUL
    out_.push_back(0);      // little-endian
    out_.push_back(8);      // sizeof(long)
    U32(4096);
    Tag("header_page", "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n");
    Tag("header_event", "# compressed entry header\n");
    U32(0);  // ftrace formats
  }
  // One system with its formats; call once, after the constructor.
  Builder& System(const std::string& name, const std::vector<std::string>& formats) {
    U32(1);
    out_.append(name.c_str(), name.size() + 1);
    U32(static_cast<uint32_t>(formats.size()));
    for (const std::string& f : formats) Sized(f);
    return *this;
  }
  std::string Finish() { return out_; }

 private:
  void U32(uint32_t v) { out_.append(reinterpret_cast<const char*>(&v), 4); }
  void Sized(const std::string& s) {
    uint64_t n = s.size();
    out_.append(reinterpret_cast<const char*>(&n), 8);
    out_.append(s);
  }
  void Tag(const std::string& tag, const std::string& data) {
    out_.append(tag.c_str(), tag.size() + 1);
    Sized(data);
  }
  std::string out_;
};

TEST(TracingDataTest, FindsEventsById) {
  std::string bytes = Builder()
                          .System("syscalls", {Format("sys_exit_mmap", 173, "\"0x%lx\", REC->ret"),
                                               Format("sys_exit_brk", 20, "\"0x%lx\", REC->ret")})
                          .Finish();
  auto td = TracingData::Parse(bytes);
  ASSERT_TRUE(td.ok()) << td.status();
  EXPECT_EQ((*td)->events_parsed(), 2);
  EXPECT_EQ((*td)->events_failed(), 0);
  ASSERT_NE((*td)->FindEvent(173), nullptr);
  EXPECT_EQ((*td)->FindEvent(173)->name(), "sys_exit_mmap");
  EXPECT_EQ((*td)->FindEvent(173)->system(), "syscalls");
  EXPECT_EQ((*td)->FindEvent(20)->FindField("ret")->offset, 16);
  EXPECT_EQ((*td)->FindEvent(21), nullptr);
}

// Print formats that killed pageblame inside libtraceevent's tep_parse_event
// (SIGFPE folding a division by zero, issue 21): formats are ours to read now,
// and their print fmt is not read at all.
TEST(TracingDataTest, ABadPrintFmtChangesNothing) {
  for (const char* fmt : {"\"0x%lx\", R/C->ret", "\"0x%lx\", R%C->ret", "\"%d\", 1/0",
                          "\"%s\", __print_symbolic(REC->ret, {1/0, \"x\"})", "\"%s\", __print_flags("}) {
    SCOPED_TRACE(fmt);
    auto td = TracingData::Parse(Builder().System("syscalls", {Format("sys_exit_mmap", 173, fmt)}).Finish());
    ASSERT_TRUE(td.ok()) << td.status();
    ASSERT_NE((*td)->FindEvent(173), nullptr);
    EXPECT_EQ((*td)->FindEvent(173)->FindField("ret")->offset, 16);
  }
}

TEST(TracingDataTest, MalformedFormatsAreCountedWithTheirReason) {
  std::string bad = Format("sys_exit_brk", 20, "\"\"");
  bad.replace(bad.find("offset:16"), 9, "offset:1x");
  auto td = TracingData::Parse(Builder()
                                   .System("syscalls", {Format("sys_exit_mmap", 173, "\"\""), bad,
                                                        Format("sys_exit_munmap", 173, "\"\"")})
                                   .Finish());
  ASSERT_TRUE(td.ok()) << td.status();
  EXPECT_EQ((*td)->events_parsed(), 1);
  EXPECT_EQ((*td)->events_failed(), 2);
  ASSERT_EQ((*td)->failures().size(), 2u);
  EXPECT_THAT((*td)->failures()[0], HasSubstr("syscalls format 2: format of sys_exit_brk, line 8: bad offset '1x'"));
  EXPECT_THAT((*td)->failures()[1], HasSubstr("ID 173, which an earlier format has"));
  EXPECT_EQ((*td)->FindEvent(173)->name(), "sys_exit_mmap");
  EXPECT_EQ((*td)->FindEvent(20), nullptr);
}

TEST(TracingDataTest, EveryCutOfTheContainerIsAnErrorNotACrash) {
  const std::string full =
      Builder().System("syscalls", {Format("sys_exit_mmap", 173, "\"\"")}).Finish();
  for (size_t n = 0; n < full.size(); ++n) {
    auto td = TracingData::Parse(full.substr(0, n));
    if (n == 0) {
      EXPECT_EQ(td.status().code(), absl::StatusCode::kNotFound);
    } else if (!td.ok()) {
      EXPECT_EQ(td.status().code(), absl::StatusCode::kDataLoss) << n;
    }
  }
  EXPECT_TRUE(TracingData::Parse(full).ok());
}

TEST(TracingDataTest, ContainerChecks) {
  std::string bytes = Builder().System("syscalls", {}).Finish();
  std::string bad_magic = bytes;
  bad_magic[3] = 'x';
  EXPECT_THAT(std::string(TracingData::Parse(bad_magic).status().message()), HasSubstr("bad magic"));
  std::string big = bytes;
  big[14] = 1;  // after the magic and "0.6\0"
  EXPECT_THAT(std::string(TracingData::Parse(big).status().message()), HasSubstr("big-endian"));
  std::string long_size = bytes;
  long_size[15] = 3;
  EXPECT_THAT(std::string(TracingData::Parse(long_size).status().message()), HasSubstr("long size 3"));
  // A section size past the end (u64: no wrap-around).
  std::string huge = bytes;
  const size_t at = huge.find("header_page") + 12;
  std::memset(&huge[at], 0xff, 8);
  EXPECT_THAT(std::string(TracingData::Parse(huge).status().message()), HasSubstr("header_page"));
}

// The formats of a real trace, as the kernel wrote them.
TEST(TracingDataTest, RealTrace) {
  auto reader = perf::PerfReader::Open(std::string(PAGEBLAME_SOURCE_DIR) + "/traces/rules-record.data");
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto td = TracingData::Parse((*reader)->info().tracing_data);
  ASSERT_TRUE(td.ok()) << td.status();
  EXPECT_EQ((*td)->events_failed(), 0) << ((*td)->failures().empty() ? "" : (*td)->failures()[0]);
  int mmap_enters = 0;
  for (const perf::EventAttr& a : (*reader)->info().attrs) {
    const EventFormat* ev = (*td)->FindEvent(static_cast<int>(a.config));
    if (ev == nullptr || ev->name() != "sys_enter_mmap") continue;
    ++mmap_enters;
    EXPECT_EQ(ev->system(), "syscalls");
    EXPECT_EQ(ev->FindField("addr")->offset, 16);
    EXPECT_EQ(ev->FindField("off")->offset, 56);
  }
  EXPECT_EQ(mmap_enters, 1);
}

// Every format of every recorded trace (perf trace record stores those of
// all syscalls: hundreds) parses: the parser is strict, not picky.
TEST(TracingDataTest, EveryFormatOfEveryRecordedTraceParses) {
  int traces = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(PAGEBLAME_SOURCE_DIR) + "/traces")) {
    if (entry.path().extension() != ".data") continue;
    auto reader = perf::PerfReader::Open(entry.path().string());
    ASSERT_TRUE(reader.ok()) << reader.status();
    if ((*reader)->info().tracing_data.empty()) continue;  // pipe mode: after Open's records
    auto td = TracingData::Parse((*reader)->info().tracing_data);
    ASSERT_TRUE(td.ok()) << entry.path() << ": " << td.status();
    EXPECT_GT((*td)->events_parsed(), 0) << entry.path();
    EXPECT_EQ((*td)->events_failed(), 0)
        << entry.path() << ": " << ((*td)->failures().empty() ? "" : (*td)->failures()[0]);
    ++traces;
  }
  EXPECT_GT(traces, 10);
}

}  // namespace
}  // namespace pageblame::decode

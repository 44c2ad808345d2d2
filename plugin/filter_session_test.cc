// FilterSession on a real trace (traces/rules-trace.data) with samples made
// up here, to pin down orders of samples the recordings in traces/ lack.
#include "plugin/filter_session.h"
#include "plugin/summary_text_for_test.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pageblame::plugin {
namespace {

constexpr char kTrace[] = PAGEBLAME_SOURCE_DIR "/traces/rules-trace.data";

// Names as perf passes them: one pointer per event.
const char* const kEnterMmap = "syscalls:sys_enter_mmap";
const char* const kExitMmap = "syscalls:sys_exit_mmap";
const char* const kRawEnter = "raw_syscalls:sys_enter";
const char* const kRawExit = "raw_syscalls:sys_exit";

struct Sample {
  const char* event;
  uint64_t time;
  int64_t nr = 9;  // raw events: the syscall number (x86_64 mmap)
};

class FilterSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Any page created by an mmap: the session keeps its creating call.
    session::SessionOptions o;
    o.path = kTrace;
    o.raw_duplicate_times = true;  // as the session loads it: spans cover the raw duplicates
    auto t = session::Session::Open(o);
    ASSERT_TRUE(t.ok()) << t.status();
    const index::TraceIndex& idx = (*t)->index();
    for (uint32_t i = 0; i < idx.num_versions(); ++i) {
      const index::Version& v = idx.version(VersionId(i));
      if (v.origin.valid() && idx.event(v.origin).syscall == decode::Syscall::kMmap &&
          v.begin == index::Begin::kCreated) {
        call_ = idx.event(v.origin);
        page_ = v.start;
        break;
      }
    }
    ASSERT_NE(page_, 0u);
    auto s = FilterSession::Start({absl::StrCat("pages=0x", absl::Hex(page_)), absl::StrCat("trace=", kTrace)}, {});
    ASSERT_TRUE(s.ok()) << s.status();
    session_ = std::move(*s);
  }

  bool Keep(Sample s, uint32_t tid = 0) {
    // A raw_syscalls payload: 8 bytes of common fields, then `long id`.
    std::vector<uint8_t> raw(64, 0);
    std::memcpy(raw.data() + 8, &s.nr, sizeof(s.nr));
    SampleView v;
    v.pid = call_.pid;
    v.tid = tid ? tid : call_.tid;
    v.time = s.time;
    v.event = s.event;
    v.raw = raw;
    return session_->Keep(v);
  }

  index::CallEvent call_;
  uint64_t page_ = 0;
  std::unique_ptr<FilterSession> session_;
};

TEST_F(FilterSessionTest, KeepsTheCallsSamplesOnly) {
  EXPECT_TRUE(Keep({kEnterMmap, call_.first_time}));
  EXPECT_TRUE(Keep({kExitMmap, call_.time}));
  EXPECT_FALSE(Keep({kExitMmap, call_.last_time + 1000}));
  EXPECT_FALSE(Keep({kEnterMmap, call_.first_time - 1}));
  // Same time, another thread: not this call.
  EXPECT_FALSE(Keep({kExitMmap, call_.time}, call_.tid + 1));
  // Inside the call's span but not a memory syscall (raw read(2), nr 0).
  EXPECT_FALSE(Keep({kRawEnter, call_.first_time, 0}));
  EXPECT_EQ(session_->memory_samples(), 5u);  // all but the read(2)
}

TEST_F(FilterSessionTest, RawExitDuplicateAfterTheCallsExit) {
  // syscalls:sys_exit_mmap first, then its raw_syscalls duplicate.
  ASSERT_TRUE(Keep({kExitMmap, call_.last_time}));
  EXPECT_TRUE(Keep({kRawExit, call_.last_time + 2}));
  // Only the one right after: a second raw exit is some other call's.
  EXPECT_FALSE(Keep({kRawExit, call_.last_time + 4}));
}

TEST_F(FilterSessionTest, TrailingRawDuplicateMustMatchTheCall) {
  ASSERT_TRUE(Keep({kExitMmap, call_.last_time}));
  EXPECT_FALSE(Keep({kRawExit, call_.last_time + 2, /*munmap*/ 11}));
  ASSERT_TRUE(Keep({kExitMmap, call_.last_time}));
  EXPECT_FALSE(Keep({kRawEnter, call_.last_time + 2}));  // an enter starts a new call
  EXPECT_FALSE(Keep({kRawExit, call_.last_time + 3}));
}

TEST_F(FilterSessionTest, SummaryNamesTheCreator) {
  ASSERT_TRUE(Keep({kExitMmap, call_.time}));
  std::string text = SummaryTextForTest(*session_);
  EXPECT_THAT(text, ::testing::HasSubstr(absl::StrCat("0x", absl::Hex(page_), " in pid ", call_.pid)));
  EXPECT_THAT(text, ::testing::HasSubstr("created by mmap("));
}

}  // namespace
}  // namespace pageblame::plugin

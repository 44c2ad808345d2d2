// TRACE.attach-maps: its format, and the replay reconciled with it (the
// address space becomes the kernel's table at its moment; the calls after
// it go on from there).
#include "processor/replay/attach_maps.h"

#include <sys/mman.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/replay/attach_reconciler.h"
#include "processor/replay/call_events_for_test.h"
#include "processor/replay/replayer.h"

namespace pageblame::replay {
namespace {

using ::testing::HasSubstr;
using index::Begin;
using index::kEndOfTrace;

// Lines as fs/proc/task_mmu.c writes them (padded before the path).
constexpr char kMaps[] =
    "55d7d2a69000-55d7d2a98000 r--p 00000000 fe:00 247101                     /usr/bin/bash\n"
    "7f0000000000-7f0000021000 rw-p 00000000 00:00 0 \n"
    "7f0000021000-7f0004000000 ---p 00000000 00:00 0 \n"
    "7f0010000000-7f0010001000 r-xs 00003000 00:01 1037                       /memfd:doublemapper (deleted)\n";

TEST(AttachMapsTest, FormatReadsBack) {
  const std::string text = AttachMaps::Format(1, {{1234, 5000, 6000, kMaps}, {1240, 6000, 6100, ""}});
  absl::StatusOr<AttachMaps> m = AttachMaps::Parse(text, "t.data.attach-maps");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->clockid(), 1);
  ASSERT_EQ(m->tables().size(), 2u);
  const AttachMaps::Table& t = m->tables()[0];
  EXPECT_EQ(t.pid, 1234u);
  EXPECT_EQ(t.from, 5000u);
  EXPECT_EQ(t.to, 6000u);
  ASSERT_EQ(t.rows.size(), 4u);
  EXPECT_EQ(t.rows[0].path, "/usr/bin/bash");
  EXPECT_EQ(t.rows[0].prot, static_cast<uint32_t>(PROT_READ));
  EXPECT_EQ(t.rows[1].path, "");
  EXPECT_EQ(t.rows[2].prot, 0u);
  EXPECT_EQ(t.rows[2].start, 0x7f0000021000u);
  EXPECT_TRUE(t.rows[3].shared);
  EXPECT_EQ(t.rows[3].pgoff, 0x3000u);
  EXPECT_EQ(t.rows[3].path, "/memfd:doublemapper (deleted)");
  EXPECT_TRUE(m->tables()[1].rows.empty());
  EXPECT_EQ(AttachMaps::PathFor("dir/t.data"), "dir/t.data.attach-maps");
}

TEST(AttachMapsTest, BrokenFilesSayWhereAndWhat) {
  EXPECT_THAT(AttachMaps::Parse("hello\n", "f").status().message(), HasSubstr("f:1: not a table of mappings"));
  EXPECT_THAT(AttachMaps::Parse("pageblame-attach-maps 1\nclock x\n", "f").status().message(),
              HasSubstr("f:2: expected 'clock CLOCKID'"));
  const std::string head = "pageblame-attach-maps 1\nclock 1\n";
  EXPECT_THAT(AttachMaps::Parse(head + "process 7 9 8\nend 1\n", "f").status().message(),
              HasSubstr("f:3: expected 'process PID FROM TO'"));
  EXPECT_THAT(AttachMaps::Parse(head + "7f00-7f10 rw-p 0 00:00 0\n", "f").status().message(),
              HasSubstr("f:3: expected 'process PID"));
  EXPECT_THAT(AttachMaps::Parse(head + "process 7 1 2\n7f0000001000-7f0000000000 rw-p 0 00:00 0\nend 1\n", "f")
                  .status()
                  .message(),
              HasSubstr("f:4: expected a page-aligned range"));
  EXPECT_THAT(AttachMaps::Parse(head + "process 7 1 2\n7f0000000000-7f0000001000 rwzp 0 00:00 0\nend 1\n", "f")
                  .status()
                  .message(),
              HasSubstr("f:4: expected permissions"));
  EXPECT_THAT(AttachMaps::Parse(head + "process 7 1 2\n" + kMaps, "f").status().message(),
              HasSubstr("cut short"));
  EXPECT_THAT(AttachMaps::Parse(head + "process 7 1 2\nend 2\n", "f").status().message(),
              HasSubstr("f:4: expected 'end 1'"));
  EXPECT_THAT(AttachMaps::Parse(head + "process 7 1 2\n7f0000002000-7f0000003000 rw-p 0 00:00 0\n"
                                       "7f0000000000-7f0000001000 rw-p 0 00:00 0\nend 1\n",
                                "f")
                  .status()
                  .message(),
              HasSubstr("f:5: the mappings are not in address order"));
}

constexpr uint64_t P = 4096;
constexpr uint64_t kBase = 0x7f0000000000;

// A replay of pid 10: perf's synthesized mapping of [kBase, kBase+4P) rw at
// time 0 (it does not report PROT_NONE ones), then events; the table is
// read at time 1000.
class ReconcileTest : public ::testing::Test {
 protected:
  void Synthesized(uint64_t start, uint64_t len, uint32_t prot) {
    TraceEvent e(TraceEvent::Kind::kMmap);
    e.time = 0;
    e.pid = e.tid = 10;
    e.mmap().start = start;
    e.mmap().len = len;
    e.mmap().prot = prot;
    e.mmap().flags = MAP_PRIVATE;
    e.mmap().has_prot = true;
    e.mmap().filename = idx_.strings().Intern("//anon");
    replayer_->Apply(e);
  }
  void Call(uint64_t t, decode::Syscall sc, std::vector<uint64_t> args, int64_t ret) {
    auto [in, out] = CallEvents(t, 10, 10, sc, args, ret, idx_.stacks().Intern({0x1000, 0x2000}));
    replayer_->Apply(in);
    replayer_->Apply(out);
  }
  void Start(const std::string& maps) {
    absl::StatusOr<AttachMaps> m = AttachMaps::Parse(AttachMaps::Format(1, {{10, 1000, 1100, maps}}), "t");
    ASSERT_TRUE(m.ok()) << m.status();
    reconciler_ = std::make_unique<AttachReconciler>(*m, &idx_.strings());
    replayer_ = std::make_unique<Replayer>(&idx_, nullptr, reconciler_.get());
  }
  // pid 10's regions at t as "start-end prot before|call", by address.
  std::vector<std::string> At(uint64_t t) {
    std::vector<std::string> out;
    for (VersionId id : idx_.RegionsAt(idx_.ProcessesWithPid(10).back(), t)) {
      const index::Version& v = idx_.version(id);
      out.push_back(absl::StrCat(absl::Hex(v.start - kBase), "-", absl::Hex(v.end - kBase), " ", v.attrs.prot, " ",
                                 v.origin.valid() ? "call" : "before"));
    }
    return out;
  }
  static std::string Row(uint64_t from, uint64_t to, const char* perms) {
    return absl::StrCat(absl::Hex(kBase + from), "-", absl::Hex(kBase + to), " ", perms, " 00000000 00:00 0 \n");
  }

  index::TraceIndex idx_;
  std::unique_ptr<AttachReconciler> reconciler_;
  std::unique_ptr<Replayer> replayer_;
};

constexpr uint32_t kRw = PROT_READ | PROT_WRITE;

// What perf missed while it started (a piece committed in an arena's
// reservation, a mapping made and one unmapped) and the reservation it
// never reports: the table's, from its moment on; calls after it replay on top.
TEST_F(ReconcileTest, TheAddressSpaceBecomesTheTableAtItsMoment) {
  Start(Row(0, 5 * P, "rw-p") + Row(5 * P, 16 * P, "---p") + Row(32 * P, 33 * P, "r-xs"));
  Synthesized(kBase, 4 * P, kRw);             // the arena's committed head, as perf saw it
  Synthesized(kBase + 20 * P, 2 * P, kRw);    // unmapped before the table was read
  Call(500, decode::Syscall::kMmap, {kBase + 40 * P, P, kRw, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, ~0ull, 0},
       static_cast<int64_t>(kBase + 40 * P));  // lost by perf's start: the table has no such page
  Call(2000, decode::Syscall::kMprotect, {kBase + 5 * P, 2 * P, kRw}, 0);  // after the table: replayed
  replayer_->Finish();
  idx_.Finalize();
  EXPECT_THAT(At(999), ::testing::ElementsAre("0-4000 3 before", "14000-16000 3 before", "28000-29000 3 call"));
  EXPECT_THAT(At(1500), ::testing::ElementsAre("0-4000 3 before", "4000-5000 3 before", "5000-10000 0 before",
                                               "20000-21000 5 before"));
  EXPECT_THAT(At(kEndOfTrace),
              ::testing::ElementsAre("0-4000 3 before", "4000-5000 3 before", "5000-7000 3 before",
                                     "7000-10000 0 before", "20000-21000 5 before"));
  EXPECT_EQ(reconciler_->removed_pages(), 3u);
  EXPECT_EQ(reconciler_->added_pages(), 1u + 11u + 1u);
  EXPECT_EQ(reconciler_->mismatched_pages(), 0u);
}

// An idle process: no event after the table; it still applies, at its
// moment, which the trace then reaches.
TEST_F(ReconcileTest, ATableAfterTheLastEventAppliesAtTheEnd) {
  Start(Row(0, 4 * P, "rw-p") + Row(4 * P, 8 * P, "---p"));
  Synthesized(kBase, 4 * P, kRw);
  Call(300, decode::Syscall::kMmap, {0, P, kRw, MAP_PRIVATE | MAP_ANONYMOUS, ~0ull, 0},
       static_cast<int64_t>(kBase + 100 * P));
  replayer_->Finish();
  idx_.Finalize();
  EXPECT_EQ(idx_.stats().last_time, 1000u);
  // The page the call made before the table is not in it: gone (perf lost its munmap).
  EXPECT_THAT(At(kEndOfTrace), ::testing::ElementsAre("0-4000 3 before", "4000-8000 0 before"));
}

// A page a call of the trace made that the table shows with another prot
// (only if perf lost events): the trace's stays, counted.
TEST_F(ReconcileTest, PagesOfTheTracesCallsKeepTheirOrigin) {
  Start(Row(0, 2 * P, "r--p"));
  Call(300, decode::Syscall::kMmap, {kBase, 2 * P, kRw, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, ~0ull, 0},
       static_cast<int64_t>(kBase));
  replayer_->Finish();
  idx_.Finalize();
  EXPECT_THAT(At(kEndOfTrace), ::testing::ElementsAre("0-2000 3 call"));
  EXPECT_EQ(reconciler_->mismatched_pages(), 2u);
}

}  // namespace
}  // namespace pageblame::replay

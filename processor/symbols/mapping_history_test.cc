#include "processor/symbols/mapping_history.h"

#include <algorithm>
#include <vector>

#include "gtest/gtest.h"

namespace pageblame::symbols {
namespace {

std::string PathAt(const MappingHistory& maps, uint32_t pid, uint64_t time, uint64_t ip) {
  const MappingHistory::Mapping* m = maps.Find(pid, time, ip);
  return m ? std::string(m->path) : "<none>";
}

TEST(MappingHistoryTest, FindsTheMappingAndItsFileOffset) {
  MappingHistory maps;
  maps.AddMapping(10, 100, 0x7f0000000000, 0x3000, 0x26000, "/lib/libc.so.6", "id");
  const MappingHistory::Mapping* m = maps.Find(10, 200, 0x7f0000001234);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->path, "/lib/libc.so.6");
  EXPECT_EQ(m->build_id, "id");
  EXPECT_EQ(m->FileOffset(0x7f0000001234), 0x27234u);
  EXPECT_EQ(PathAt(maps, 10, 200, 0x7f0000003000), "<none>");  // end is exclusive
  EXPECT_EQ(PathAt(maps, 10, 200, 0x7effffffffff), "<none>");
  EXPECT_EQ(PathAt(maps, 11, 200, 0x7f0000001234), "<none>");  // another process
  maps.AddMapping(10, 100, 0x1000, 0, 0, "/empty", "");         // len 0: ignored
  EXPECT_EQ(PathAt(maps, 10, 200, 0x1000), "<none>");
}

TEST(MappingHistoryTest, LaterMappingTakesOverTheOverlapFromItsTimeOn) {
  MappingHistory maps;
  maps.AddMapping(10, 100, 0x10000, 0x4000, 0, "/a", "");  // [0x10000, 0x14000)
  maps.AddMapping(10, 200, 0x11000, 0x1000, 0, "/b", "");  // [0x11000, 0x12000)
  maps.AddMapping(10, 300, 0x13000, 0x3000, 0, "/c", "");  // [0x13000, 0x16000)
  EXPECT_EQ(PathAt(maps, 10, 150, 0x11800), "/a");
  EXPECT_EQ(PathAt(maps, 10, 200, 0x11800), "/b");
  EXPECT_EQ(PathAt(maps, 10, 999, 0x11800), "/b");
  EXPECT_EQ(PathAt(maps, 10, 999, 0x10800), "/a");  // head of /a stays
  EXPECT_EQ(PathAt(maps, 10, 999, 0x12800), "/a");  // middle of /a stays
  EXPECT_EQ(PathAt(maps, 10, 250, 0x13800), "/a");
  EXPECT_EQ(PathAt(maps, 10, 300, 0x13800), "/c");
  EXPECT_EQ(PathAt(maps, 10, 300, 0x15800), "/c");
  // An unsplit piece keeps the original mapping's start for offsets.
  EXPECT_EQ(maps.Find(10, 999, 0x12800)->FileOffset(0x12800), 0x2800u);
  // Replacing again: /d over all of it; earlier states are still answered.
  maps.AddMapping(10, 400, 0x10000, 0x6000, 0, "/d", "");
  EXPECT_EQ(PathAt(maps, 10, 400, 0x11800), "/d");
  EXPECT_EQ(PathAt(maps, 10, 399, 0x11800), "/b");
  EXPECT_EQ(PathAt(maps, 10, 199, 0x11800), "/a");
  EXPECT_EQ(PathAt(maps, 10, 350, 0x15800), "/c");
}

TEST(MappingHistoryTest, ForkCopiesTheParentsMappingsAtThatTime) {
  MappingHistory maps;
  maps.AddMapping(1, 100, 0x1000, 0x1000, 0, "/libc", "");
  maps.OnFork(2, 1, 200);
  maps.AddMapping(1, 300, 0x5000, 0x1000, 0, "/parent_later", "");
  maps.AddMapping(2, 300, 0x6000, 0x1000, 0, "/child_only", "");
  maps.AddMapping(2, 310, 0x1000, 0x1000, 0, "/child_over_libc", "");
  EXPECT_EQ(PathAt(maps, 2, 250, 0x1800), "/libc");
  EXPECT_EQ(PathAt(maps, 2, 400, 0x5800), "<none>");  // after the fork: not inherited
  EXPECT_EQ(PathAt(maps, 1, 400, 0x5800), "/parent_later");
  EXPECT_EQ(PathAt(maps, 1, 400, 0x6800), "<none>");  // the child's own
  EXPECT_EQ(PathAt(maps, 2, 400, 0x6800), "/child_only");
  EXPECT_EQ(PathAt(maps, 2, 400, 0x1800), "/child_over_libc");
  EXPECT_EQ(PathAt(maps, 1, 400, 0x1800), "/libc");
  // Grandchild: inherits through the chain, each at its own fork time.
  maps.OnFork(3, 2, 305);
  EXPECT_EQ(PathAt(maps, 3, 500, 0x6800), "/child_only");
  EXPECT_EQ(PathAt(maps, 3, 500, 0x1800), "/libc");  // forked before 310
}

TEST(MappingHistoryTest, ThreadCreationIsNotAFork) {
  MappingHistory maps;
  maps.AddMapping(1, 100, 0x1000, 0x1000, 0, "/libc", "");
  maps.OnFork(1, 1, 200);  // PERF_RECORD_FORK for a new thread: pid == ppid
  EXPECT_EQ(PathAt(maps, 1, 300, 0x1800), "/libc");
}

TEST(MappingHistoryTest, ExecStartsOver) {
  MappingHistory maps;
  maps.AddMapping(1, 100, 0x1000, 0x1000, 0, "/bin/sh", "");
  maps.OnFork(2, 1, 150);
  maps.OnExec(2, 200);
  maps.AddMapping(2, 200, 0x8000, 0x1000, 0, "/bin/ls", "");
  EXPECT_EQ(PathAt(maps, 2, 199, 0x1800), "/bin/sh");
  EXPECT_EQ(PathAt(maps, 2, 200, 0x1800), "<none>");
  EXPECT_EQ(PathAt(maps, 2, 300, 0x1800), "<none>");
  EXPECT_EQ(PathAt(maps, 2, 300, 0x8800), "/bin/ls");
  EXPECT_EQ(PathAt(maps, 2, 199, 0x8800), "<none>");
  EXPECT_EQ(PathAt(maps, 1, 300, 0x1800), "/bin/sh");  // the parent is unaffected
  // Exec of a process known only from its mappings.
  maps.OnExec(1, 400);
  EXPECT_EQ(PathAt(maps, 1, 400, 0x1800), "<none>");
  EXPECT_EQ(PathAt(maps, 1, 399, 0x1800), "/bin/sh");
}

TEST(MappingHistoryTest, MappingRecordedJustAfterTheLookupTimeIsUsed) {
  MappingHistory maps;
  maps.AddMapping(1, 100, 0x1000, 0x1000, 0, "/early", "");
  maps.AddMapping(1, 500, 0x9000, 0x1000, 0, "/late", "");
  // Nothing covered 0x9800 at 300; the mapping that appeared later in the
  // same exec lifetime is the best answer.
  EXPECT_EQ(PathAt(maps, 1, 300, 0x9800), "/late");
  // But never across an exec.
  maps.OnExec(1, 600);
  maps.AddMapping(1, 700, 0xa000, 0x1000, 0, "/after_exec", "");
  EXPECT_EQ(PathAt(maps, 1, 300, 0xa800), "<none>");
  EXPECT_EQ(PathAt(maps, 1, 650, 0xa800), "/after_exec");
}

TEST(MappingHistoryTest, MappingsBeforeTheFirstRecordTimeStillApply) {
  // Synthesized records of a process that existed before the trace.
  MappingHistory maps;
  maps.AddMapping(1, 1000, 0x1000, 0x1000, 0, "/a", "");
  EXPECT_EQ(PathAt(maps, 1, 0, 0x1800), "/a");
}

// File order is not time order (perf writes each CPU's buffer in turn): the
// .NET recording in /work/hunt-out had CPU 0's MMAP2 of System.Private.CoreLib
// and its JIT code before CPU 1's COMM exec of dotnet, which is older.
TEST(MappingHistoryTest, MappingReadBeforeItsExecBelongsToTheExec) {
  MappingHistory maps;
  maps.AddMapping(1, 50, 0x1000, 0x1000, 0, "/bin/perf-exec", "");  // before the exec
  maps.AddMapping(1, 500, 0x9000, 0x1000, 0, "/corelib", "");       // after it, read first
  maps.OnExec(1, 100);
  maps.AddMapping(1, 150, 0x2000, 0x1000, 0, "/dotnet", "");
  EXPECT_EQ(PathAt(maps, 1, 600, 0x9800), "/corelib");
  EXPECT_EQ(PathAt(maps, 1, 600, 0x2800), "/dotnet");
  EXPECT_EQ(PathAt(maps, 1, 600, 0x1800), "<none>");  // gone with the exec
  EXPECT_EQ(PathAt(maps, 1, 60, 0x1800), "/bin/perf-exec");
  EXPECT_EQ(PathAt(maps, 1, 60, 0x9800), "<none>");  // never across the exec
  EXPECT_EQ(PathAt(maps, 1, 300, 0x9800), "/corelib");  // appeared later, same epoch
}

TEST(MappingHistoryTest, MappingReadBeforeItsForkBelongsToTheChild) {
  MappingHistory maps;
  maps.AddMapping(1, 100, 0x1000, 0x1000, 0, "/libc", "");
  maps.AddMapping(2, 300, 0x6000, 0x1000, 0, "/child_only", "");  // before its FORK record
  maps.OnFork(2, 1, 200);
  EXPECT_EQ(PathAt(maps, 2, 400, 0x6800), "/child_only");
  EXPECT_EQ(PathAt(maps, 2, 400, 0x1800), "/libc");  // inherited still
  // An exec read before the fork that precedes it.
  maps.AddMapping(3, 700, 0x8000, 0x1000, 0, "/bin/ls", "");
  maps.OnExec(3, 650);
  maps.OnFork(3, 1, 600);
  EXPECT_EQ(PathAt(maps, 3, 620, 0x1800), "/libc");
  EXPECT_EQ(PathAt(maps, 3, 800, 0x1800), "<none>");
  EXPECT_EQ(PathAt(maps, 3, 800, 0x8800), "/bin/ls");
}

TEST(MappingHistoryTest, OverlappingMappingsInAnyOrderGiveTheAnswersOfTimeOrder) {
  // .NET's W^X double mapping grows its executable view of a memfd in place;
  // the records of the two CPUs arrive interleaved.
  const struct {
    uint64_t time, len;
    const char* path;
  } records[] = {{100, 0x4000, "/a"}, {200, 0x2000, "/b"}, {300, 0x6000, "/c"}, {300, 0x1000, "/d"}};
  for (const std::vector<int>& order :
       std::vector<std::vector<int>>{{0, 1, 2, 3}, {2, 3, 0, 1}, {1, 2, 0, 3}, {2, 0, 3, 1}}) {
    MappingHistory maps;
    for (int i : order) {
      maps.AddMapping(1, records[i].time, 0x10000, records[i].len, 0, records[i].path, "");
    }
    SCOPED_TRACE(testing::PrintToString(order));
    EXPECT_EQ(PathAt(maps, 1, 150, 0x11800), "/a");
    EXPECT_EQ(PathAt(maps, 1, 150, 0x13800), "/a");
    EXPECT_EQ(PathAt(maps, 1, 250, 0x11800), "/b");
    EXPECT_EQ(PathAt(maps, 1, 250, 0x13800), "/a");
    EXPECT_EQ(PathAt(maps, 1, 350, 0x15800), "/c");
    EXPECT_EQ(PathAt(maps, 1, 350, 0x11800), "/c");
    // Equal times: the one added last wins, as in time order.
    EXPECT_EQ(PathAt(maps, 1, 350, 0x10800),
              std::find(order.begin(), order.end(), 3) > std::find(order.begin(), order.end(), 2)
                  ? "/d" : "/c");
  }
}

}  // namespace
}  // namespace pageblame::symbols

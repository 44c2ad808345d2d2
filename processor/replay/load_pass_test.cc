// LoadPass on bundled recordings of the same program (traces/MANIFEST.md):
// its counters against what perf itself reports of those files. The
// expected numbers come from perf 6.1:
//   perf report --stats -i TRACE             (records by type)
//   perf script -i TRACE -F event | sort | uniq -c   (samples by event)
//   perf script -i TRACE -F event,trace      (exits with a negative return)
#include "processor/replay/load_pass.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/index/index_codec.h"
#include "processor/replay/trace_loader.h"

namespace pageblame::replay {
namespace {

using ::testing::ElementsAre;

std::unique_ptr<LoadedTrace> Load(const std::string& trace, ReplayWorker::Ordering ordering,
                                  bool raw_duplicate_times = false) {
  LoadOptions opts;
  opts.path = std::string(PAGEBLAME_SOURCE_DIR) + "/traces/" + trace;
  opts.preload_symbols = false;
  opts.raw_duplicate_times = raw_duplicate_times;
  LoadPass pass(opts, ordering);
  const absl::Status open = pass.Open();
  EXPECT_TRUE(open.ok()) << open;
  if (!open.ok()) return nullptr;
  auto loaded = pass.Run();
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  if (!loaded.ok()) return nullptr;
  EXPECT_NE(*loaded, nullptr) << "the lane order diverged";
  return std::move(*loaded);
}

// perf record -g -e syscalls:sys_{enter,exit}_{mmap,munmap,brk,mremap}:
// 330 samples (100+100 mmap, 35+35 munmap, 15+15 brk, 15+15 mremap), 1 MMAP
// (the kernel's text, not a process's: not counted) + 8 MMAP2, 3 COMM,
// 4 FORK, 5 EXIT records; 9 exits return -errno (5 mmap, 1 munmap,
// 3 mremap) and one brk leaves the break where it was.
TEST(LoadPassTest, CountersOfARecordTraceAreWhatPerfReports) {
  for (auto ordering : {ReplayWorker::Ordering::kLanes, ReplayWorker::Ordering::kRounds}) {
    SCOPED_TRACE(ordering == ReplayWorker::Ordering::kLanes ? "lanes" : "rounds");
    std::unique_ptr<LoadedTrace> t = Load("rules-record.data", ordering);
    ASSERT_NE(t, nullptr);
    const index::TraceStats& st = t->index().stats();
    EXPECT_EQ(st.samples, 330u);
    EXPECT_EQ(st.memory_samples, 330u);
    EXPECT_EQ(st.skipped_samples, 0u);
    EXPECT_EQ(st.calls, 165u);
    EXPECT_EQ(st.calls_failed, 10u);
    EXPECT_EQ(st.unmatched_exits, 0u);
    EXPECT_EQ(st.unmatched_enters, 0u);
    EXPECT_EQ(st.pending_at_end, 0u);
    EXPECT_EQ(st.bad_samples, 0u);
    EXPECT_EQ(st.bad_records, 0u);
    EXPECT_TRUE(st.unparsed.empty());
    EXPECT_EQ(st.mmap_records, 8u);
    EXPECT_EQ(st.comm_records, 3u);
    EXPECT_EQ(st.fork_records, 4u);
    EXPECT_EQ(st.exit_records, 5u);
    EXPECT_EQ(st.lost_records, 0u);
    EXPECT_TRUE(st.lost.empty());
    EXPECT_EQ(st.impossible_calls, 0u);
    EXPECT_EQ(st.out_of_order, 0u);
    EXPECT_EQ(st.time_order_by_rounds, ordering == ReplayWorker::Ordering::kRounds);
    EXPECT_LE(st.first_time, st.last_time);
    EXPECT_GT(st.first_time, 0u);
    // The main process, its fork child and the fork+exec child.
    EXPECT_THAT(t->index().Pids(), ElementsAre(11112u, 11116u, 11117u));
    EXPECT_EQ(t->unwind_stats(), nullptr);  // frame-pointer chains: nothing unwound
    EXPECT_THAT(t->sources(), ::testing::HasSubstr("mmap: syscalls:sys_{enter,exit}_mmap"));
  }
}

// The same program under perf trace record: every syscall also comes as
// raw_syscalls:sys_enter/sys_exit (314 of each, 958 samples in all). The
// trace has no syscalls:* events of mprotect and madvise, so those come
// from raw_syscalls (NR 10: 9 calls, NR 28: 2 calls, all succeeding) and
// the raw events are parsed: the 330 raw duplicates of the four other syscalls'
// calls are dropped (skipped), the 22 of mprotect/madvise replayed, and the
// 276 of other syscalls (execve, read, ...: perf script -F event,trace lists
// them by NR) counted apart. Every sample is in one counter.
TEST(LoadPassTest, ATraceRecordReplaysRawCallsOnlyWhereNoSyscallsEventsExist) {
  std::unique_ptr<LoadedTrace> t = Load("rules-trace.data", ReplayWorker::Ordering::kLanes);
  ASSERT_NE(t, nullptr);
  const index::TraceStats& st = t->index().stats();
  EXPECT_EQ(st.samples, 958u);
  EXPECT_EQ(st.memory_samples, 330u + 22u);
  EXPECT_EQ(st.skipped_samples, 330u);
  EXPECT_EQ(st.other_syscall_samples, 276u);
  EXPECT_EQ(st.samples, st.memory_samples + st.skipped_samples + st.other_syscall_samples + st.bad_samples);
  EXPECT_EQ(st.calls, 165u + 11u);
  EXPECT_EQ(st.calls_failed, 10u);
  EXPECT_EQ(st.bad_samples, 0u);
  EXPECT_EQ(st.unmatched_exits, 0u);
  EXPECT_EQ(st.pending_at_end, 0u);
  EXPECT_EQ(st.mmap_records, 8u);
  EXPECT_EQ(st.fork_records, 4u);
  EXPECT_EQ(st.exit_records, 5u);
  EXPECT_THAT(t->sources(), ::testing::HasSubstr("mprotect: raw_syscalls (nr 10)"));
  EXPECT_THAT(t->sources(), ::testing::HasSubstr("mmap: syscalls:sys_{enter,exit}_mmap"));
  // With their times wanted, the raw duplicates are read as memory samples, and
  // still not replayed: the same calls.
  std::unique_ptr<LoadedTrace> raw_duplicates =
      Load("rules-trace.data", ReplayWorker::Ordering::kLanes, /*raw_duplicate_times=*/true);
  ASSERT_NE(raw_duplicates, nullptr);
  EXPECT_EQ(raw_duplicates->index().stats().calls, 176u);
  EXPECT_EQ(raw_duplicates->index().stats().calls_failed, 10u);
  EXPECT_EQ(raw_duplicates->index().stats().memory_samples, 352u + 330u);
  EXPECT_EQ(raw_duplicates->index().stats().skipped_samples, 0u);
  EXPECT_EQ(raw_duplicates->index().num_events(), t->index().num_events());
}

TEST(LoadPassTest, OpenRefusesATraceWithoutMemorySyscallsOrWithoutCallChains) {
  for (const char* trace : {"no-syscalls.data", "no-callchain.data"}) {
    SCOPED_TRACE(trace);
    LoadOptions opts;
    opts.path = std::string(PAGEBLAME_SOURCE_DIR) + "/traces/" + trace;
    LoadPass pass(opts, ReplayWorker::Ordering::kLanes);
    const absl::Status s = pass.Open();
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("record with"));
  }
  LoadOptions missing;
  missing.path = std::string(PAGEBLAME_SOURCE_DIR) + "/traces/does-not-exist.data";
  LoadPass pass(missing, ReplayWorker::Ordering::kLanes);
  EXPECT_FALSE(pass.Open().ok());
}

// perf record -d, attached (traces/MANIFEST.md): perf script
// --show-mmap-events lists 1 MMAP of the kernel's text and 36 MMAP2 records,
// 5 of them executable (4 r-xp, 1 --xp) and 31 data mappings. The one
// mapping history holds each code mapping once (pcs are only ever in code);
// the replay still gets every record (its regions existed before the trace).
TEST(LoadPassTest, TheMappingHistoryHoldsEachCodeMappingOnce) {
  std::unique_ptr<LoadedTrace> t = Load("attach-data.data", ReplayWorker::Ordering::kLanes);
  ASSERT_NE(t, nullptr);
  const symbols::MappingHistory& maps = t->symbolizer().mappings();
  EXPECT_EQ(maps.mapping_count(), 5u);
  EXPECT_EQ(t->index().stats().mmap_records, 36u);
  for (const symbols::MappingHistory::Mapping& m : maps.mappings()) {
    EXPECT_EQ(maps.Find(16898, t->index().stats().last_time, m.start), &m) << m.path;
  }
}

}  // namespace
}  // namespace pageblame::replay

namespace pageblame::replay {
namespace {

// The threaded loader (LoadTrace: a reading thread, the replay thread, the
// symbol preloader) over every bundled trace: each loads, except the two
// made to be refused, and loading it again gives the same index, byte for
// byte (index/index_codec.h), whatever the threads' timing. scripts/test
// runs this under ThreadSanitizer.
TEST(TraceLoaderTest, EveryBundledTraceLoadsTheSameEveryTime) {
  const std::string dir = std::string(PAGEBLAME_SOURCE_DIR) + "/traces/";
  std::vector<std::string> traces = {"dotnet/dotnet-leak.data", "dotnet/dotnet-leak-fp.data"};
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".data") traces.push_back(e.path().filename());
  }
  std::sort(traces.begin(), traces.end());
  ASSERT_GT(traces.size(), 20u);
  std::vector<std::string> refused;
  for (const std::string& t : traces) {
    SCOPED_TRACE(t);
    LoadOptions o;
    o.path = dir + t;
    o.symbols.debug_dir = dir + "buildid-cache";
    o.preload_symbols = true;
    std::string first;
    for (int run = 0; run < 2; ++run) {
      absl::StatusOr<std::unique_ptr<LoadedTrace>> loaded = LoadTrace(o);
      if (!loaded.ok()) {
        if (run == 0) refused.push_back(t);
        break;
      }
      std::string bytes;
      index::IndexCodec::Encode((*loaded)->index(), &bytes);
      if (run == 0) first = std::move(bytes);
      else EXPECT_TRUE(bytes == first) << "a second load made another index";
    }
  }
  EXPECT_THAT(refused, ElementsAre("no-callchain.data", "no-syscalls.data"));
}

}  // namespace
}  // namespace pageblame::replay

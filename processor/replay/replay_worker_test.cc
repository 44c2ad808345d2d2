#include "processor/replay/replay_worker.h"

#include <sys/mman.h>

#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "processor/replay/call_events_for_test.h"
#include "processor/replay/event_sorter.h"
#include "processor/replay/replayer.h"

namespace pageblame::replay {
namespace {

constexpr uint64_t P = 4096;

// A few threads of one process mmap and munmap pages of a small arena, so
// that calls split, replace and remove each other's regions; rounds of events
// as perf writes them (per thread in time order, threads one after another).
std::vector<std::vector<TraceEvent>> Workload(index::TraceIndex* idx, int calls) {
  std::mt19937_64 rng(11);
  std::vector<std::vector<TraceEvent>> rounds(1);
  uint64_t t = 1000;
  for (int i = 0; i < calls; ++i) {
    const uint32_t tid = 100 + static_cast<uint32_t>(rng() % 4);
    const uint64_t addr = 0x10000000 + (rng() % 64) * P;
    const uint64_t len = (1 + rng() % 8) * P;
    const bool munmap = rng() % 3 == 0;
    std::vector<uint64_t> ips = {0x400000 + rng() % 16, 0x401000};
    const StackId stack = idx->stacks().Intern(ips);
    auto [in, out] =
        munmap ? CallEvents(t, 100, tid, decode::Syscall::kMunmap, {addr, len}, 0, stack)
               : CallEvents(t, 100, tid, decode::Syscall::kMmap,
                            {addr, len, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED},
                            static_cast<int64_t>(addr), stack);
    in.cpu = out.cpu = tid % 2;  // two CPUs, each in time order
    rounds.back().push_back(in);
    rounds.back().push_back(out);
    t += 2;
    if (rng() % 50 == 0) rounds.emplace_back();
  }
  return rounds;
}

// The reference: the same rounds sorted and replayed on this thread.
void ReplaySorted(index::TraceIndex* idx, const std::vector<std::vector<TraceEvent>>& rounds) {
  Replayer replayer(idx, nullptr);
  EventSorter sorter([&](const TraceEvent& e) { replayer.Apply(e); });
  for (const auto& round : rounds) {
    for (const TraceEvent& e : round) sorter.Push(e);
    sorter.FinishedRound();
  }
  sorter.FlushAll();
  replayer.Finish();
}

void ExpectSameIndex(const index::TraceIndex& a, const index::TraceIndex& b) {
  ASSERT_EQ(a.num_events(), b.num_events());
  ASSERT_EQ(a.num_versions(), b.num_versions());
  for (size_t i = 0; i < a.num_versions(); ++i) {
    const index::Version& va = a.version(VersionId(static_cast<uint32_t>(i)));
    const index::Version& vb = b.version(VersionId(static_cast<uint32_t>(i)));
    EXPECT_EQ(va.start, vb.start) << i;
    EXPECT_EQ(va.end, vb.end) << i;
    EXPECT_EQ(va.t_from, vb.t_from) << i;
    EXPECT_EQ(va.t_to, vb.t_to) << i;
    EXPECT_EQ(va.origin, vb.origin) << i;
    EXPECT_EQ(va.end_kind, vb.end_kind) << i;
  }
  EXPECT_EQ(a.stats().calls, b.stats().calls);
}

class ReplayWorkerOrderingTest : public ::testing::TestWithParam<ReplayWorker::Ordering> {};

TEST_P(ReplayWorkerOrderingTest, ReplaysExactlyLikeTheSortedReplayOnOneThread) {
  // Without and with event buffers made ahead by the replay thread (which
  // the loader then fills while that thread may be replaying).
  for (uint64_t input_bytes : {uint64_t{0}, ReplayWorker::kMinBatchBytes * ReplayWorker::kMaxQueued}) {
    SCOPED_TRACE(input_bytes);
    index::TraceIndex threaded, direct;
    // Far more events than one batch, so batches and rounds interleave.
    const int kCalls = static_cast<int>(ReplayWorker::kBatch) * 2;
    auto rounds = Workload(&threaded, kCalls);
    Workload(&direct, kCalls);  // same stacks, same ids
    {
      ReplayWorker worker(&threaded, nullptr, GetParam(), /*cpus=*/2, input_bytes);
      for (const auto& round : rounds) {
        for (const TraceEvent& e : round) worker.Push(e);
        worker.FinishedRound();
      }
      EXPECT_EQ(worker.Finish(), 0u);
      EXPECT_FALSE(worker.diverged());
    }
    ReplaySorted(&direct, rounds);
    ASSERT_GT(direct.num_versions(), static_cast<size_t>(kCalls) / 2);
    ExpectSameIndex(threaded, direct);
  }
}

// A -z trace can decompress to millions of FINISHED_ROUND records with
// nothing between them (the fuzz campaign's: 2^27 of them, 115 s at ~1 us a
// handover). Past two, they change nothing: the same index, and no time.
TEST_P(ReplayWorkerOrderingTest, RunsOfEmptyRoundsReplayLikeOneAndCostNothing) {
  index::TraceIndex threaded, direct;
  const int kCalls = static_cast<int>(ReplayWorker::kBatch);
  auto rounds = Workload(&threaded, kCalls);
  Workload(&direct, kCalls);
  constexpr int kEmptyRounds = 1 << 22;
  const auto t0 = std::chrono::steady_clock::now();
  {
    ReplayWorker worker(&threaded, nullptr, GetParam(), /*cpus=*/2);
    for (size_t r = 0; r < rounds.size(); ++r) {
      for (const TraceEvent& e : rounds[r]) worker.Push(e);
      worker.FinishedRound();
      if (r == rounds.size() / 2) {
        for (int i = 0; i < kEmptyRounds; ++i) worker.FinishedRound();
      }
    }
    EXPECT_EQ(worker.Finish(), 0u);
    EXPECT_FALSE(worker.diverged());
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(seconds, 2.0);  // was ~4 s for the empty rounds alone
  ReplaySorted(&direct, rounds);
  ExpectSameIndex(threaded, direct);
}

TEST(ReplayWorkerTest, MakesBuffersAheadOnlyForWhatTheInputCanFill) {
  EXPECT_EQ(ReplayWorker::BuffersAhead(0), 0u);  // a pipe: size unknown
  EXPECT_EQ(ReplayWorker::BuffersAhead(ReplayWorker::kMinBatchBytes - 1), 0u);
  EXPECT_EQ(ReplayWorker::BuffersAhead(ReplayWorker::kMinBatchBytes * 3), 3u);
  EXPECT_EQ(ReplayWorker::BuffersAhead(uint64_t{1} << 40), ReplayWorker::kMaxQueued);
}

TEST(ReplayWorkerTest, StopsMakingBuffersWhenDestroyedAtOnce) {
  // The loader gives up right away (a bad file): the worker must not wait
  // for the buffers it was making, nor leak them.
  index::TraceIndex idx;
  ReplayWorker worker(&idx, nullptr, ReplayWorker::Ordering::kLanes, /*cpus=*/2, uint64_t{1} << 40);
}

INSTANTIATE_TEST_SUITE_P(BothOrders, ReplayWorkerOrderingTest,
                         ::testing::Values(ReplayWorker::Ordering::kRounds,
                                           ReplayWorker::Ordering::kLanes));

// Two CPUs whose threads' calls overlap in time on a shared arena (so the
// order across CPUs decides what each call removes), written as perf does:
// each round one time window, CPU 0's events of it, then CPU 1's.
std::vector<std::vector<TraceEvent>> OverlappingWorkload(index::TraceIndex* idx, int calls) {
  std::mt19937_64 rng(23);
  struct Timed {
    TraceEvent e;
    uint64_t window;
  };
  std::vector<Timed> per_cpu[2];
  uint64_t clock[2] = {1000, 1000};
  for (int i = 0; i < calls; ++i) {
    const uint32_t cpu = rng() % 2;
    const uint32_t tid = 100 + cpu * 2 + static_cast<uint32_t>(rng() % 2);
    const uint64_t addr = 0x10000000 + (rng() % 32) * P;
    const uint64_t len = (1 + rng() % 4) * P;
    std::vector<uint64_t> ips = {0x400000 + rng() % 16, 0x401000};
    const StackId stack = idx->stacks().Intern(ips);
    auto [in, out] =
        rng() % 3 == 0
            ? CallEvents(0, 100, tid, decode::Syscall::kMunmap, {addr, len}, 0, stack)
            : CallEvents(0, 100, tid, decode::Syscall::kMmap,
                         {addr, len, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED},
                         static_cast<int64_t>(addr), stack);
    in.cpu = out.cpu = cpu;
    in.time = clock[cpu] += 1 + rng() % 3;
    out.time = clock[cpu] += rng() % 6;  // ties with the enter too
    per_cpu[cpu].push_back({in, in.time / 400});
    per_cpu[cpu].push_back({out, out.time / 400});
  }
  std::vector<std::vector<TraceEvent>> rounds;
  size_t next[2] = {0, 0};
  for (uint64_t w = 0; next[0] < per_cpu[0].size() || next[1] < per_cpu[1].size(); ++w) {
    rounds.emplace_back();
    for (int cpu = 0; cpu < 2; ++cpu) {
      while (next[cpu] < per_cpu[cpu].size() && per_cpu[cpu][next[cpu]].window == w) {
        rounds.back().push_back(per_cpu[cpu][next[cpu]++].e);
      }
    }
  }
  return rounds;
}

TEST(ReplayWorkerTest, CallsMadeOfNeighboursReplayExactlyLikeTheirTwoEvents) {
  index::TraceIndex threaded, direct;
  const int kCalls = static_cast<int>(ReplayWorker::kBatch) * 2;
  auto rounds = OverlappingWorkload(&threaded, kCalls);
  OverlappingWorkload(&direct, kCalls);
  size_t made = 0;
  {
    ReplayWorker worker(&threaded, nullptr, ReplayWorker::Ordering::kLanes, /*cpus=*/2);
    for (const auto& round : rounds) {
      for (const TraceEvent& e : round) {
        // As the loader does: an exit right after its enter joins it.
        if (e.kind == TraceEvent::Kind::kExit &&
            worker.JoinExit(e.pid, e.tid, e.cpu, e.syscall, e.time, e.call().ret)) {
          ++made;
          continue;
        }
        worker.Push(e);
      }
      worker.FinishedRound();
    }
    worker.Finish();
    EXPECT_FALSE(worker.diverged());
  }
  ReplaySorted(&direct, rounds);
  // Nearly every call travelled as one event, and calls did overlap.
  EXPECT_GT(made, static_cast<size_t>(kCalls) * 9 / 10);
  ASSERT_GT(direct.num_versions(), static_cast<size_t>(kCalls) / 2);
  ExpectSameIndex(threaded, direct);
  for (size_t i = 0; i < direct.num_events(); ++i) {
    const EventId id(static_cast<uint32_t>(i));
    EXPECT_EQ(threaded.event(id).time, direct.event(id).time) << i;
    EXPECT_EQ(threaded.event(id).first_time, direct.event(id).first_time) << i;
    EXPECT_EQ(threaded.event(id).tid, direct.event(id).tid) << i;
  }
  EXPECT_EQ(threaded.stats().unmaps_reordered, direct.stats().unmaps_reordered);
  EXPECT_EQ(threaded.stats().first_time, direct.stats().first_time);
  EXPECT_EQ(threaded.stats().last_time, direct.stats().last_time);
}

TEST(ReplayWorkerTest, ALaneOrderBrokenByTheTraceStopsTheReplayAndTheLoader) {
  index::TraceIndex idx;
  auto rounds = Workload(&idx, 4000);
  ASSERT_GE(rounds.size(), 2u);
  ReplayWorker worker(&idx, nullptr, ReplayWorker::Ordering::kLanes, /*cpus=*/2);
  for (const TraceEvent& e : rounds[0]) worker.Push(e);
  worker.FinishedRound();
  worker.FinishedRound();
  // An event older than everything, after perf's rule has let events out.
  TraceEvent late = rounds[0].front();
  late.time = 1;
  worker.Push(late);
  worker.FinishedRound();
  // Every further batch is dropped, nothing blocks; Finish joins.
  for (int i = 0; i < 20; ++i) {
    for (const TraceEvent& e : rounds[1]) worker.Push(e);
    worker.FinishedRound();
  }
  worker.Finish();
  EXPECT_TRUE(worker.diverged());
}

TEST(ReplayWorkerTest, OnlyTheExitOfTheEnterJustAddedJoinsIt) {
  index::TraceIndex idx;
  auto [in, out] = CallEvents(10, 100, 101, decode::Syscall::kMunmap, {0x10000000, P}, 0);
  in.cpu = out.cpu = 1;
  ReplayWorker rounds(&idx, nullptr, ReplayWorker::Ordering::kRounds, /*cpus=*/2);
  rounds.Push(in);
  EXPECT_FALSE(rounds.JoinExit(100, 101, 1, out.syscall, out.time, 0));  // EventSorter: never
  rounds.Finish();
  index::TraceIndex lanes_idx;
  ReplayWorker lanes(&lanes_idx, nullptr, ReplayWorker::Ordering::kLanes, /*cpus=*/2);
  EXPECT_FALSE(lanes.JoinExit(100, 101, 1, out.syscall, out.time, 0));  // nothing added yet
  lanes.Push(in);
  EXPECT_FALSE(lanes.JoinExit(100, 102, 1, out.syscall, out.time, 0));   // another thread
  EXPECT_FALSE(lanes.JoinExit(100, 101, 0, out.syscall, out.time, 0));   // another CPU
  EXPECT_FALSE(lanes.JoinExit(100, 101, 1, decode::Syscall::kMmap, out.time, 0));
  EXPECT_FALSE(lanes.JoinExit(100, 101, 1, out.syscall, in.time - 1, 0));  // older than it
  EXPECT_TRUE(lanes.JoinExit(100, 101, 1, out.syscall, out.time, 0));
  EXPECT_FALSE(lanes.JoinExit(100, 101, 1, out.syscall, out.time, 0));  // already a call
  lanes.Finish();
  // The one event was replayed as the call it stands for.
  EXPECT_EQ(lanes_idx.stats().calls, 1u);
  EXPECT_EQ(lanes_idx.stats().unmatched_exits, 0u);
  EXPECT_EQ(idx.stats().calls, 0u);  // an enter alone
}

TEST(ReplayWorkerTest, FinishRunsTheCallersWorkUntilTheReplayIsDone) {
  index::TraceIndex threaded, direct;
  auto rounds = Workload(&threaded, 20000);
  Workload(&direct, 20000);
  ReplayWorker worker(&threaded, nullptr, ReplayWorker::Ordering::kLanes, /*cpus=*/2);
  for (const auto& round : rounds) {
    for (const TraceEvent& e : round) worker.Push(e);
    worker.FinishedRound();
  }
  // Endless work: Finish stops asking once the replay thread is done.
  int pieces = 0;
  worker.Finish([&] {
    ++pieces;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    return true;
  });
  EXPECT_FALSE(worker.diverged());
  ReplaySorted(&direct, rounds);
  ExpectSameIndex(threaded, direct);
  // Work that runs out stops being asked for at once.
  index::TraceIndex small;
  auto few = Workload(&small, 10);
  ReplayWorker other(&small, nullptr, ReplayWorker::Ordering::kLanes, /*cpus=*/2);
  for (const TraceEvent& e : few[0]) other.Push(e);
  int asked = 0;
  other.Finish([&] { return ++asked < 3; });
  EXPECT_LE(asked, 3);
  EXPECT_GT(small.stats().calls, 0u);
}

TEST(ReplayWorkerTest, StopsWithoutFinishingWhenTheLoaderGivesUp) {
  index::TraceIndex idx;
  auto rounds = Workload(&idx, 1000);
  {
    ReplayWorker worker(&idx, nullptr);
    for (const TraceEvent& e : rounds[0]) worker.Push(e);
    worker.FinishedRound();
    // Destroyed here without Finish(), as LoadTrace does on a read error:
    // must return (join the thread), not hang (ctest's timeout) or crash.
  }
  // The thread is gone: the index can be read (and freed) safely.
  EXPECT_LE(idx.stats().calls, 1000u);
}

}  // namespace
}  // namespace pageblame::replay

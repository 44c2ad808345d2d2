#include "processor/replay/lane_sorter.h"

#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "processor/replay/event_sorter.h"
#include "processor/replay/sort_reference_for_test.h"

namespace pageblame::replay {
namespace {

TraceEvent At(uint64_t t, uint32_t cpu, uint64_t tag) {
  TraceEvent e;
  e.time = t;
  e.cpu = cpu;
  e.a[0] = tag;
  return e;
}

TEST(LaneSorterTest, DeliversWhatEveryCpuIsPastWithoutWaitingForTheRound) {
  std::vector<uint64_t> got;
  LaneSorter s(2, [&](const TraceEvent& e) { got.push_back(e.a[0]); });
  // CPU 0's buffer, then CPU 1's, as one round is written. While only CPU 0
  // has been read, CPU 1 could still have anything: nothing is due.
  s.Push({At(10, 0, 0), At(20, 0, 1), At(30, 0, 2)});
  EXPECT_FALSE(s.HasDue());
  EXPECT_EQ(s.Deliver(100), 0u);
  // Both CPUs are past 25: 10, 15, 20, 25 go out now, 30 waits for CPU 1.
  s.Push({At(15, 1, 3), At(25, 1, 4)});
  EXPECT_TRUE(s.HasDue());
  EXPECT_EQ(s.Deliver(3), 3u);  // no more than asked
  EXPECT_EQ(s.Deliver(100), 1u);
  EXPECT_EQ(got, (std::vector<uint64_t>{0, 3, 1, 4}));
  EXPECT_EQ(s.held(), 1u);
  s.Push({At(40, 1, 5)});
  EXPECT_EQ(s.Deliver(100), 1u);
  s.FlushAll();
  EXPECT_EQ(got, (std::vector<uint64_t>{0, 3, 1, 4, 2, 5}));
  EXPECT_FALSE(s.diverged());
}

TEST(LaneSorterTest, AnIdleCpuHoldsTheBoundAtPerfsOwn) {
  std::vector<uint64_t> got;
  LaneSorter s(2, [&](const TraceEvent& e) { got.push_back(e.a[0]); });
  s.Push({At(10, 0, 0), At(20, 0, 1)});
  s.FinishedRound();
  s.Push({At(30, 0, 2)});
  s.FinishedRound();  // perf's rule may now let out everything up to 20
  EXPECT_EQ(s.Deliver(100), 2u);
  EXPECT_EQ(got, (std::vector<uint64_t>{0, 1}));
  s.FlushAll();
  EXPECT_EQ(got, (std::vector<uint64_t>{0, 1, 2}));
}

TEST(LaneSorterTest, TiesGoOutInFileOrderAcrossCpus) {
  std::vector<uint64_t> got;
  LaneSorter s(3, [&](const TraceEvent& e) { got.push_back(e.a[0]); });
  s.Push({At(5, 2, 0), At(5, 0, 1), At(5, TraceEvent::kNoCpu, 2), At(5, 1, 3), At(5, 2, 4)});
  s.FlushAll();
  EXPECT_EQ(got, (std::vector<uint64_t>{0, 1, 2, 3, 4}));
}

TEST(LaneSorterTest, AnEventBehindWhatWentOutIsCaught) {
  LaneSorter s(2, [](const TraceEvent&) {});
  s.Push({At(10, 0, 0), At(20, 1, 1)});
  EXPECT_EQ(s.Deliver(100), 1u);  // 10 is out
  s.Push({At(5, 0, 2)});          // older than 10, on its own CPU too
  EXPECT_TRUE(s.diverged());
  EXPECT_EQ(s.Deliver(100), 0u);  // nothing more goes out
  EXPECT_FALSE(s.HasDue());
}

TEST(LaneSorterTest, AnEventPerfWouldHaveDeliveredLateIsCaughtWithoutDelivering) {
  // perf's rule at the second round end lets out everything up to 100; an
  // event at 50 after that is out of order for perf (its order is not the
  // sorted one), even though this sorter has not delivered anything.
  LaneSorter s(4, [](const TraceEvent&) {});
  s.Push({At(100, 0, 0)});
  s.FinishedRound();
  s.Push({At(200, 0, 1)});
  s.FinishedRound();
  s.Push({At(50, 3, 2)});
  EXPECT_TRUE(s.diverged());
}

TEST(LaneSorterTest, AStragglerOnItsOwnCpuIsPlacedIfNothingNewerWentOut) {
  std::vector<uint64_t> got;
  LaneSorter s(2, [&](const TraceEvent& e) { got.push_back(e.a[0]); });
  s.Push({At(10, 0, 0), At(30, 0, 1), At(20, 0, 2), At(20, 0, 3)});
  s.Push({At(40, 1, 4)});
  s.FlushAll();
  EXPECT_FALSE(s.diverged());
  EXPECT_EQ(got, (std::vector<uint64_t>{0, 2, 3, 1, 4}));
}

// Pushes `rounds` in batches cut at random points, delivering random slices
// between pushes the way ReplayWorker does. Returns the tags in delivery
// order; counts what was due before FlushAll and the batches handed back.
struct Outcome {
  std::vector<uint64_t> got;
  size_t before_end = 0;
  size_t batches = 0, returned = 0;
  bool diverged = false;
};
Outcome Drive(const std::vector<std::vector<TraceEvent>>& rounds, uint32_t cpus, std::mt19937_64& rng) {
  Outcome run;
  LaneSorter s(cpus, [&](const TraceEvent& e) { run.got.push_back(e.a[0]); });
  auto take = [&] {
    for (const auto& v : s.TakeSpares()) {
      EXPECT_TRUE(v.empty());
      ++run.returned;
    }
  };
  for (const auto& round : rounds) {
    size_t at = 0;
    while (at < round.size()) {
      const size_t n = std::min(round.size() - at, size_t{1} + rng() % 300);
      s.Push(std::vector<TraceEvent>(round.begin() + at, round.begin() + at + n));
      ++run.batches;
      at += n;
      s.Deliver(rng() % 200);
      take();
    }
    s.FinishedRound();
    s.Deliver(rng() % 200);
    take();
  }
  s.Deliver(SIZE_MAX);  // all that is due before the end
  run.before_end = run.got.size();
  s.FlushAll();
  take();
  run.diverged = s.diverged();
  if (!run.diverged) {
    EXPECT_EQ(s.held(), 0u);
  }
  return run;
}

TEST(LaneSorterTest, EitherPerfsOrderOrDivergedOnAnyRounds) {
  // Rounds with stragglers, ties and shuffled rounds: whenever the sorter
  // does not report a divergence, its order is exactly perf's.
  std::mt19937_64 rng(5);
  int exact = 0, diverged = 0;
  for (int trial = 0; trial < 300; ++trial) {
    auto rounds = RandomRounds(rng, trial);
    uint64_t perf_late = 0;
    const std::vector<uint64_t> want = Reference(rounds, &perf_late);
    Outcome run = Drive(rounds, 8, rng);
    if (run.diverged) {
      ++diverged;
      continue;
    }
    ++exact;
    ASSERT_EQ(run.got, want) << "trial " << trial;
    EXPECT_EQ(perf_late, 0u) << "trial " << trial;
    EXPECT_EQ(run.returned, run.batches) << "trial " << trial;
  }
  // Both outcomes occur, so neither check above is vacuous.
  EXPECT_GT(exact, 100);
  EXPECT_GT(diverged, 0);
}

// Over many real-shaped traces: the lane order is perf's, and how many
// events were due before the end, by lanes and by perf's rule.
void ExpectPerfsOrderEarlier(bool idle_cpus, size_t* early, size_t* perf_early, size_t* total) {
  std::mt19937_64 rng(9);
  *early = *perf_early = *total = 0;
  for (int trial = 0; trial < 300; ++trial) {
    uint32_t cpus = 0;
    auto rounds = CleanRounds(rng, idle_cpus, &cpus);
    uint64_t perf_late = 0;
    const std::vector<uint64_t> want = Reference(rounds, &perf_late);
    ASSERT_EQ(perf_late, 0u);
    Outcome run = Drive(rounds, cpus, rng);
    ASSERT_FALSE(run.diverged) << "trial " << trial;
    ASSERT_EQ(run.got, want) << "trial " << trial;
    EXPECT_EQ(run.returned, run.batches) << "trial " << trial;
    size_t n = 0;
    EventSorter perf([&](const TraceEvent&) { ++n; });
    for (const auto& round : rounds) {
      for (const TraceEvent& e : round) perf.Push(e);
      perf.FinishedRound();
    }
    ASSERT_GE(run.before_end, n) << "trial " << trial;  // never later than perf
    *early += run.before_end;
    *perf_early += n;
    *total += run.got.size();
  }
}

TEST(LaneSorterTest, BusyCpusLetEventsOutLongBeforePerfsRuleDoes) {
  size_t early, perf_early, total;
  ExpectPerfsOrderEarlier(/*idle_cpus=*/false, &early, &perf_early, &total);
  // perf's rule holds the last round back until the end (a fifth of these
  // traces); lanes hold back only what not every CPU has passed.
  EXPECT_LT((total - early) * 10, total - perf_early)
      << "held back to the end: " << total - early << " by lanes, " << total - perf_early
      << " by perf's rule, of " << total;
}

TEST(LaneSorterTest, IdleCpusHoldLanesToPerfsRuleButNeverBehindIt) {
  size_t early, perf_early, total;
  ExpectPerfsOrderEarlier(/*idle_cpus=*/true, &early, &perf_early, &total);
  EXPECT_GE(early, perf_early);
}

}  // namespace
}  // namespace pageblame::replay

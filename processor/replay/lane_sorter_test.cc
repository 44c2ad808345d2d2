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
  e.call().args[0] = tag;
  return e;
}

TEST(LaneSorterTest, DeliversWhatEveryCpuIsPastWithoutWaitingForTheRound) {
  std::vector<uint64_t> got;
  LaneSorter s(2, [&](const TraceEvent& e, bool) { got.push_back(e.call().args[0]); });
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
  LaneSorter s(2, [&](const TraceEvent& e, bool) { got.push_back(e.call().args[0]); });
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
  LaneSorter s(3, [&](const TraceEvent& e, bool) { got.push_back(e.call().args[0]); });
  s.Push({At(5, 2, 0), At(5, 0, 1), At(5, TraceEvent::kNoCpu, 2), At(5, 1, 3), At(5, 2, 4)});
  s.FlushAll();
  EXPECT_EQ(got, (std::vector<uint64_t>{0, 1, 2, 3, 4}));
}

TEST(LaneSorterTest, AnEventBehindWhatWentOutIsCaught) {
  LaneSorter s(2, [](const TraceEvent&, bool) {});
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
  LaneSorter s(4, [](const TraceEvent&, bool) {});
  s.Push({At(100, 0, 0)});
  s.FinishedRound();
  s.Push({At(200, 0, 1)});
  s.FinishedRound();
  s.Push({At(50, 3, 2)});
  EXPECT_TRUE(s.diverged());
}

TEST(LaneSorterTest, AStragglerOnItsOwnCpuIsPlacedIfNothingNewerWentOut) {
  std::vector<uint64_t> got;
  LaneSorter s(2, [&](const TraceEvent& e, bool) { got.push_back(e.call().args[0]); });
  s.Push({At(10, 0, 0), At(30, 0, 1), At(20, 0, 2), At(20, 0, 3)});
  s.Push({At(40, 1, 4)});
  s.FlushAll();
  EXPECT_FALSE(s.diverged());
  EXPECT_EQ(got, (std::vector<uint64_t>{0, 2, 3, 1, 4}));
}

TEST(LaneSorterTest, ACallGoesOutAsItsEnterAndItsExitEachInItsPlace) {
  std::vector<uint64_t> got;
  std::vector<bool> parts;
  LaneSorter s(2, [&](const TraceEvent& e, bool exit_part) {
    // A call's exit carries its own tag in a[1] here.
    got.push_back(exit_part ? e.call().args[1] : e.call().args[0]);
    parts.push_back(exit_part);
  });
  TraceEvent call = At(10, 0, 0);  // enter at 10, exit at 40
  call.kind = TraceEvent::Kind::kCall;
  call.call().exit_time = 40;
  call.call().args[1] = 1;
  s.Push({call, At(50, 0, 2)});
  EXPECT_EQ(s.held(), 3u);  // two events in one
  // CPU 1 is past 30: the enter goes out, the exit (40) waits.
  s.Push({At(20, 1, 3), At(30, 1, 4)});
  EXPECT_EQ(s.Deliver(100), 3u);
  EXPECT_EQ(got, (std::vector<uint64_t>{0, 3, 4}));
  // A tie at 40 on another CPU goes out after the exit, which came first in
  // the file; 45 after it by time.
  s.Push({At(40, 1, 5), At(45, 1, 6), At(60, 1, 7)});
  s.FlushAll();
  EXPECT_EQ(got, (std::vector<uint64_t>{0, 3, 4, 1, 5, 6, 2, 7}));
  EXPECT_EQ(parts, (std::vector<bool>{false, false, false, true, false, false, false, false}));
  EXPECT_EQ(s.held(), 0u);
  EXPECT_FALSE(s.diverged());
  // The batch with the call came back only once the exit was out.
  EXPECT_EQ(s.TakeSpares().size(), 3u);
}

TEST(LaneSorterTest, ACallsExitGoesAfterAStragglerOlderThanIt) {
  std::vector<uint64_t> got;
  LaneSorter s(1, [&](const TraceEvent& e, bool exit_part) {
    got.push_back(exit_part ? e.call().args[1] : e.call().args[0]);
  });
  TraceEvent call = At(10, 0, 0);
  call.kind = TraceEvent::Kind::kCall;
  call.call().exit_time = 40;
  call.call().args[1] = 1;
  // 30 came later in the file but is older than the exit; 40 ties with it.
  s.Push({call, At(30, 0, 2), At(40, 0, 3)});
  s.FlushAll();
  EXPECT_EQ(got, (std::vector<uint64_t>{0, 2, 1, 3}));
}

// Pushes `rounds` in batches cut at random points, delivering random slices
// between pushes the way ReplayWorker does. Returns the tags in delivery
// order; counts what was due before FlushAll and the batches handed back.
// With `calls`, some neighbours in a batch on one CPU (the second no older)
// travel as one kCall, as the loader makes them; the sink gives back their
// two tags in turn, so the order must come out the same.
struct Outcome {
  std::vector<uint64_t> got;
  size_t before_end = 0;
  size_t batches = 0, returned = 0, calls = 0;
  bool diverged = false;
};
std::vector<TraceEvent> MakeCalls(std::vector<TraceEvent> batch, std::mt19937_64& rng,
                                  size_t* calls) {
  std::vector<TraceEvent> out;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (i + 1 < batch.size() && batch[i].cpu == batch[i + 1].cpu &&
        batch[i].time <= batch[i + 1].time && rng() % 3 != 0) {
      TraceEvent call = batch[i];
      call.kind = TraceEvent::Kind::kCall;
      call.call().exit_time = batch[i + 1].time;
      call.call().args[1] = batch[i + 1].call().args[0];
      out.push_back(call);
      ++*calls;
      ++i;
    } else {
      out.push_back(batch[i]);
    }
  }
  return out;
}
Outcome Drive(const std::vector<std::vector<TraceEvent>>& rounds, uint32_t cpus,
              std::mt19937_64& rng, bool calls = false) {
  Outcome run;
  LaneSorter s(cpus, [&](const TraceEvent& e, bool exit_part) {
    run.got.push_back(exit_part ? e.call().args[1] : e.call().args[0]);
  });
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
      std::vector<TraceEvent> batch(round.begin() + at, round.begin() + at + n);
      if (calls) batch = MakeCalls(std::move(batch), rng, &run.calls);
      s.Push(std::move(batch));
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
  for (int trial = 0; trial < 600; ++trial) {
    auto rounds = RandomRounds(rng, trial / 2);
    uint64_t perf_late = 0;
    const std::vector<uint64_t> want = Reference(rounds, &perf_late);
    Outcome run = Drive(rounds, 8, rng, /*calls=*/trial % 2 == 1);
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
  size_t calls = 0;
  for (int trial = 0; trial < 300; ++trial) {
    uint32_t cpus = 0;
    auto rounds = CleanRounds(rng, idle_cpus, &cpus);
    uint64_t perf_late = 0;
    const std::vector<uint64_t> want = Reference(rounds, &perf_late);
    ASSERT_EQ(perf_late, 0u);
    Outcome run = Drive(rounds, cpus, rng);
    ASSERT_FALSE(run.diverged) << "trial " << trial;
    ASSERT_EQ(run.got, want) << "trial " << trial;
    // The same with calls made of neighbours: the same order, as early.
    std::mt19937_64 same = rng;
    Outcome with_calls = Drive(rounds, cpus, same, /*calls=*/true);
    ASSERT_FALSE(with_calls.diverged) << "trial " << trial;
    ASSERT_EQ(with_calls.got, want) << "trial " << trial;
    calls += with_calls.calls;
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
  EXPECT_GT(calls, *total / 10);  // calls were made, in numbers
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

#include "processor/replay/event_sorter.h"

#include <algorithm>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace pageblame::replay {
namespace {

TEST(EventSorterTest, DeliversInTimeOrderAtRoundBoundariesLikePerf) {
  std::vector<uint64_t> got;
  EventSorter s([&](const TraceEvent& e) { got.push_back(e.time); });
  auto push = [&](uint64_t t) {
    TraceEvent e;
    e.time = t;
    s.Push(e);
  };
  push(10); push(30); push(20);  // round 1 (two CPUs interleaved)
  s.FinishedRound();
  EXPECT_TRUE(got.empty());      // nothing is safe until the next round ends
  push(25); push(40);            // round 2: 25 is older than round 1's max
  s.FinishedRound();
  EXPECT_EQ(got, (std::vector<uint64_t>{10, 20, 25, 30}));
  push(35);
  s.FlushAll();
  EXPECT_EQ(got, (std::vector<uint64_t>{10, 20, 25, 30, 35, 40}));
  EXPECT_EQ(s.out_of_order(), 0u);
}

TEST(EventSorterTest, TiesKeepFileOrderAndStragglersAreCounted) {
  std::vector<uint64_t> tags;
  EventSorter s([&](const TraceEvent& e) { tags.push_back(e.a[0]); });
  for (uint64_t tag = 0; tag < 3; ++tag) {
    TraceEvent e;
    e.time = 100;
    e.a[0] = tag;
    s.Push(e);
  }
  s.FinishedRound();
  s.FinishedRound();  // flushes everything <= 100
  TraceEvent late;
  late.time = 50;  // older than what was delivered
  late.a[0] = 9;
  s.Push(late);
  s.FlushAll();
  EXPECT_EQ(tags, (std::vector<uint64_t>{0, 1, 2, 9}));
  EXPECT_EQ(s.out_of_order(), 1u);
}

// The order a reference implementation of perf's rule gives: at each round,
// every buffered event up to the previous round's largest time, sorted by
// time with ties in push order (a stable sort of everything buffered).
std::vector<uint64_t> Reference(const std::vector<std::vector<TraceEvent>>& rounds) {
  std::vector<uint64_t> out;
  std::vector<TraceEvent> buffered;
  uint64_t max_time = 0, limit = 0;
  bool have_round = false;
  auto flush = [&](uint64_t lim) {
    std::stable_sort(buffered.begin(), buffered.end(),
                     [](const TraceEvent& a, const TraceEvent& b) { return a.time < b.time; });
    std::vector<TraceEvent> rest;
    for (const TraceEvent& e : buffered) {
      if (e.time <= lim) out.push_back(e.a[0]);
      else rest.push_back(e);
    }
    buffered = rest;
  };
  for (const auto& round : rounds) {
    for (const TraceEvent& e : round) {
      buffered.push_back(e);
      max_time = std::max(max_time, e.time);
    }
    if (have_round) flush(limit);
    limit = max_time;
    have_round = true;
  }
  flush(UINT64_MAX);
  return out;
}

// Rounds shaped like perf's: each CPU's events in time order, CPUs one
// after the other, with ties and stragglers older than the last round; and
// some rounds in random order (more runs than any perf round has).
std::vector<std::vector<TraceEvent>> RandomRounds(std::mt19937_64& rng, int trial) {
  const int cpus = 1 + static_cast<int>(rng() % 8);
  const bool shuffled = trial % 10 == 9;
  std::vector<std::vector<TraceEvent>> rounds;
  uint64_t tag = 0, base = 1000;
  const int nrounds = 1 + static_cast<int>(rng() % 6);
  for (int r = 0; r < nrounds; ++r) {
    std::vector<TraceEvent> round;
    for (int c = 0; c < cpus; ++c) {
      uint64_t t = base - rng() % 300;  // may reach into the previous round
      const int n = static_cast<int>(rng() % 400);
      for (int i = 0; i < n; ++i) {
        t += rng() % 3;  // 0: a tie
        TraceEvent e;
        e.time = t;
        e.a[0] = tag++;
        round.push_back(e);
      }
    }
    if (shuffled) std::shuffle(round.begin(), round.end(), rng);
    rounds.push_back(round);
    base += 500;
  }
  return rounds;
}

TEST(EventSorterTest, MatchesPerfsRuleOnRandomPerCpuRounds) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    auto rounds = RandomRounds(rng, trial);
    std::vector<uint64_t> got;
    EventSorter s([&](const TraceEvent& e) { got.push_back(e.a[0]); });
    for (const auto& round : rounds) {
      for (const TraceEvent& e : round) s.Push(e);
      s.FinishedRound();
    }
    s.FlushAll();
    ASSERT_EQ(got, Reference(rounds)) << "trial " << trial;
  }
}

TEST(EventSorterTest, BatchesPushedWholeSortLikeSingleEventsAndComeBackEmpty) {
  // ReplayWorker hands the sorter whole batches, cut at random points of a
  // round (and at its end): the order must be the same, and every batch must
  // come back, empty, once all its events are delivered.
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    auto rounds = RandomRounds(rng, trial);
    std::vector<uint64_t> got;
    EventSorter s([&](const TraceEvent& e) { got.push_back(e.a[0]); });
    size_t batches = 0, returned = 0;
    auto take = [&] {
      for (const auto& v : s.TakeSpares()) {
        EXPECT_TRUE(v.empty());
        ++returned;
      }
    };
    for (const auto& round : rounds) {
      size_t at = 0;
      while (at < round.size()) {
        const size_t n = std::min(round.size() - at, size_t{1} + rng() % 300);
        s.Push(std::vector<TraceEvent>(round.begin() + at, round.begin() + at + n));
        ++batches;
        at += n;
        take();
      }
      s.FinishedRound();
      take();
    }
    s.FlushAll();
    take();
    ASSERT_EQ(got, Reference(rounds)) << "trial " << trial;
    EXPECT_EQ(returned, batches) << "trial " << trial;
  }
}

}  // namespace
}  // namespace pageblame::replay

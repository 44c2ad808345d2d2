#include "processor/replay/event_sorter.h"

#include <algorithm>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "processor/replay/sort_reference_for_test.h"

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
  EventSorter s([&](const TraceEvent& e) { tags.push_back(e.call().args[0]); });
  for (uint64_t tag = 0; tag < 3; ++tag) {
    TraceEvent e;
    e.time = 100;
    e.call().args[0] = tag;
    s.Push(e);
  }
  s.FinishedRound();
  s.FinishedRound();  // flushes everything <= 100
  TraceEvent late;
  late.time = 50;  // older than what was delivered
  late.call().args[0] = 9;
  s.Push(late);
  s.FlushAll();
  EXPECT_EQ(tags, (std::vector<uint64_t>{0, 1, 2, 9}));
  EXPECT_EQ(s.out_of_order(), 1u);
}

TEST(EventSorterTest, MatchesPerfsRuleOnRandomPerCpuRounds) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    auto rounds = RandomRounds(rng, trial);
    std::vector<uint64_t> got;
    EventSorter s([&](const TraceEvent& e) { got.push_back(e.call().args[0]); });
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
    EventSorter s([&](const TraceEvent& e) { got.push_back(e.call().args[0]); });
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

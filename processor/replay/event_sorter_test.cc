#include "processor/replay/event_sorter.h"

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

}  // namespace
}  // namespace pageblame::replay

#include "plugin/keep_set.h"

#include "gtest/gtest.h"
#include "processor/index/trace_index.h"

namespace pageblame::plugin {
namespace {

index::CallEvent Call(uint32_t tid, uint64_t first, uint64_t time, uint64_t last) {
  index::CallEvent e;
  e.pid = 1;
  e.tid = tid;
  e.first_time = first;
  e.time = time;
  e.last_time = last;
  return e;
}

TEST(KeepSetTest, FindsTheSpanOfTheThread) {
  KeepSet k;
  k.Add(Call(7, 100, 130, 135), EventId(0));
  k.Add(Call(7, 200, 210, 220), EventId(1));
  k.Add(Call(8, 100, 110, 300), EventId(2));
  k.Add(Call(7, 100, 130, 135), EventId(0));  // duplicate
  k.Finalize();
  EXPECT_EQ(k.size(), 3u);
  EXPECT_EQ(k.Find(7, 100), EventId(0));
  EXPECT_EQ(k.Find(7, 135), EventId(0));  // both ends are samples of the call
  EXPECT_FALSE(k.Find(7, 99).valid());
  EXPECT_FALSE(k.Find(7, 136).valid());
  EXPECT_FALSE(k.Find(7, 199).valid());
  EXPECT_EQ(k.Find(7, 215), EventId(1));
  EXPECT_FALSE(k.Find(7, 221).valid());
  EXPECT_EQ(k.Find(8, 250), EventId(2));
  bool last = true;
  EXPECT_EQ(k.Find(7, 210, &last), EventId(1));
  EXPECT_FALSE(last);
  EXPECT_EQ(k.Find(7, 220, &last), EventId(1));
  EXPECT_TRUE(last);
  EXPECT_FALSE(k.Find(7, 221, &last).valid());
  EXPECT_FALSE(last);
  EXPECT_FALSE(k.Find(9, 250).valid());
}

// The index keeps a call of over 2^32 ns whole (index/call_record.h): the
// plugin keeps every sample of it, the first and the last included.
TEST(KeepSetTest, ACallOfSecondsFromTheIndexKeepsItsWholeSpan) {
  constexpr uint64_t kSecond = 1000000000;
  index::TraceIndex idx;
  const EventId shortcall = idx.AddEvent(Call(7, 100 * kSecond, 100 * kSecond + 50, 100 * kSecond + 60));
  const EventId id = idx.AddEvent(Call(7, 200 * kSecond, 205 * kSecond, 205 * kSecond + 70000000));
  KeepSet k;
  k.Add(idx.event(shortcall), shortcall);
  k.Add(idx.event(id), id);
  k.Finalize();
  EXPECT_FALSE(k.Find(7, 200 * kSecond - 1).valid());
  EXPECT_EQ(k.Find(7, 200 * kSecond), id);
  EXPECT_EQ(k.Find(7, 203 * kSecond), id);
  bool last = false;
  EXPECT_EQ(k.Find(7, 205 * kSecond + 70000000, &last), id);
  EXPECT_TRUE(last);
  EXPECT_FALSE(k.Find(7, 205 * kSecond + 70000001).valid());
  EXPECT_EQ(k.Find(7, 100 * kSecond + 60), shortcall);
}

TEST(KeepSetTest, MissingEnterTimeFallsBackToTheExit) {
  KeepSet k;
  k.Add(Call(3, 0, 500, 0), EventId(4));
  k.Finalize();
  EXPECT_EQ(k.Find(3, 500), EventId(4));
  EXPECT_FALSE(k.Find(3, 499).valid());
}

}  // namespace
}  // namespace pageblame::plugin

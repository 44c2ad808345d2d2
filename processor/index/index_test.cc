#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/byte_writer.h"
#include "processor/index/index_codec.h"
#include "processor/index/interval_index.h"
#include "processor/index/stack_table.h"
#include "processor/index/trace_index.h"

namespace pageblame::index {
namespace {

using ::testing::HasSubstr;

TEST(StackTableTest, InternsEachUniqueStackOnce) {
  StackTable t;
  std::vector<uint64_t> a = {1, 2, 3}, b = {1, 2}, c = {1, 2, 3};
  StackId ia = t.Intern(a), ib = t.Intern(b), ic = t.Intern(c);
  EXPECT_EQ(ia, ic);
  EXPECT_NE(ia, ib);
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.num_frames(), 5u);  // {1,2,3} and {1,2} have different outermost frames
  EXPECT_EQ(t.Ips(ib), b);
  EXPECT_TRUE(t.Ips(StackId::Invalid()).empty());
}

// The stack table in the index file (format 4): its prefix tree read back
// as it was; a frame whose caller is not an earlier frame (a loop), or a
// frame owned by two stacks, is damage.
TEST(StackTableTest, TheIndexFileKeepsTheTreeAndRefusesLoopsAndTwoOwners) {
  TraceIndex idx;
  const std::vector<uint64_t> a = {0x10, 0x20}, b = {0x30, 0x20};
  idx.stacks().Intern(a);
  idx.stacks().Intern(b, /*unwound=*/true);
  std::string bytes;
  IndexCodec::Encode(idx, &bytes);
  {
    TraceIndex copy;
    ASSERT_TRUE(IndexCodec::Decode(bytes, &copy).ok());
    EXPECT_EQ(copy.stacks().Ips(StackId(0)), a);
    EXPECT_EQ(copy.stacks().Ips(StackId(1)), b);
    EXPECT_TRUE(copy.stacks().Unwound(StackId(1)));
    EXPECT_EQ(copy.stacks().Intern(b), StackId(1));  // interning goes on where it was
    EXPECT_EQ(copy.stacks().num_frames(), 3u);
  }
  // The frames: a count of 3, then 0x20 under the root (its ip, its parent).
  std::string frames;
  PutFixed<uint64_t>(&frames, 3);
  PutFixed<uint64_t>(&frames, 0x20);
  PutFixed<uint32_t>(&frames, 0);
  const size_t at = bytes.find(frames);
  ASSERT_NE(at, std::string::npos);
  std::string loop = bytes;
  loop[at + 16] = 1;  // 0x20's caller: itself
  TraceIndex damaged;
  EXPECT_THAT(std::string(IndexCodec::Decode(loop, &damaged).message()), HasSubstr("no earlier caller frame"));
  // The ids after the frames (3 of 12 bytes) and their count: stack 1 made
  // the owner of stack 0's leaf too.
  const size_t ids = at + 8 + 3 * 12 + 8;
  std::string twice = bytes;
  twice.replace(ids + 5, 4, bytes.substr(ids, 4));
  twice[ids + 9] = 2;
  TraceIndex damaged2;
  EXPECT_THAT(std::string(IndexCodec::Decode(twice, &damaged2).message()), HasSubstr("repeats stack 0"));
}

// Thinned (record --max-size), the file keeps only the stacks its calls
// name, with the frames on their paths, and the strings they name, each
// renumbered in its old order; an alias (Bind) kept without the stack it
// aliases owns no frame, so interning its ips again makes a new id, as the
// whole index would not give the alias either.
TEST(StackTableTest, AThinnedIndexFileKeepsOnlyTheStacksAndStringsItsCallsName) {
  TraceIndex idx;
  StackTable& t = idx.stacks();
  const std::vector<uint64_t> a = {1, 2, 3}, b = {4, 2, 3}, c = {5, 6};
  const StackId sa = t.Intern(a), sb = t.Intern(b), sc = t.Intern(c);
  const StackId alias = t.Reserve();
  ASSERT_EQ(t.Bind(alias, c), sc);
  idx.strings().Intern("a build id no call names");
  const StringId early = idx.strings().Intern("early"), late = idx.strings().Intern("late");
  uint64_t time = 0;
  for (auto [stack, comm] : {std::pair{sa, early}, {sc, early}, {sb, late}, {alias, late}}) {
    CallEvent e;
    e.time = time += 10;
    e.stack = stack;
    e.comm = comm;
    idx.AddEvent(e);
  }
  std::string bytes;
  IndexCodec::EncodeThinned(idx, 25, &bytes);
  TraceIndex copy;
  ASSERT_TRUE(IndexCodec::Decode(bytes, &copy).ok());
  ASSERT_EQ(copy.num_events(), 2u);
  EXPECT_EQ(copy.stacks().size(), 2u);
  EXPECT_EQ(copy.stacks().num_frames(), 5u);  // 3, 2, 4 and 6, 5: not 1
  EXPECT_EQ(copy.event(EventId(0)).stack, StackId(0));
  EXPECT_EQ(copy.event(EventId(1)).stack, StackId(1));
  EXPECT_EQ(copy.stacks().Ips(StackId(0)), b);
  EXPECT_EQ(copy.stacks().Ips(StackId(1)), c);
  EXPECT_EQ(copy.strings().size(), 1u);
  EXPECT_EQ(copy.strings().Get(copy.event(EventId(1)).comm), "late");
  EXPECT_EQ(copy.stacks().Intern(b), StackId(0));  // b's own id: kept, owns its frame
  EXPECT_EQ(copy.stacks().Intern(c), StackId(2));  // the alias owns nothing
  EXPECT_EQ(copy.stacks().num_frames(), 5u);
}

TEST(IntervalIndexTest, StabMatchesBruteForceOnRandomIntervals) {
  std::mt19937_64 rng(42);
  std::vector<IntervalIndex::Interval> iv;
  for (uint32_t i = 0; i < 2000; ++i) {
    uint64_t s = rng() % 100000, len = 1 + rng() % 5000;
    iv.push_back({s, s + len, i});
  }
  IntervalIndex idx;
  idx.Build(iv);
  for (int q = 0; q < 500; ++q) {
    uint64_t x = rng() % 110000;
    std::set<uint32_t> want, got;
    for (const auto& i : iv) if (i.start <= x && x < i.end) want.insert(i.payload);
    idx.Stab(x, [&](uint32_t p) { got.insert(p); });
    ASSERT_EQ(got, want) << x;
  }
}

}  // namespace
}  // namespace pageblame::index

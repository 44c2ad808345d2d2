// StackTable beyond plain interning (index_test.cc): leaf-first order kept,
// the unwound flag, and ids reserved before their ips are known.
#include "processor/index/stack_table.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pageblame::index {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

TEST(StackTableTest, IpsAreLeafFirstAsInterned) {
  StackTable t;
  const std::vector<uint64_t> leaf_first = {0x7f0000001000, 0x401234, 0x400100};
  const std::vector<uint64_t> reversed = {0x400100, 0x401234, 0x7f0000001000};
  const StackId a = t.Intern(leaf_first);
  const StackId b = t.Intern(reversed);
  EXPECT_NE(a, b);  // order is part of a stack
  EXPECT_THAT(t.Ips(a), ElementsAre(0x7f0000001000, 0x401234, 0x400100));
  EXPECT_THAT(t.Ips(b), ElementsAre(0x400100, 0x401234, 0x7f0000001000));
  // A stack that is a suffix of another (same callers, one frame less).
  const std::vector<uint64_t> suffix = {0x401234, 0x400100};
  const StackId c = t.Intern(suffix);
  EXPECT_NE(c, a);
  EXPECT_THAT(t.Ips(c), ElementsAre(0x401234, 0x400100));
  EXPECT_EQ(t.size(), 3u);
  // c is a's callers: the frames a stored for them, now c's own stack.
  EXPECT_EQ(t.num_frames(), 6u);
  EXPECT_EQ(t.Intern(leaf_first), a);
  EXPECT_THAT(t.DistinctIps(), UnorderedElementsAre(0x7f0000001000, 0x401234, 0x400100));
}

TEST(StackTableTest, TheEmptyStackIsOneStack) {
  StackTable t;
  const StackId e1 = t.Intern({});
  const StackId e2 = t.Intern({});
  EXPECT_TRUE(e1.valid());
  EXPECT_EQ(e1, e2);
  EXPECT_THAT(t.Ips(e1), IsEmpty());
  const std::vector<uint64_t> one = {0};  // an ip of 0 is not "no ips"
  EXPECT_NE(t.Intern(one), e1);
  EXPECT_EQ(t.size(), 2u);
}

TEST(StackTableTest, UnknownIdsGiveNothing) {
  StackTable t;
  const std::vector<uint64_t> ips = {1, 2};
  t.Intern(ips);
  EXPECT_THAT(t.Ips(StackId(1)), IsEmpty());
  EXPECT_THAT(t.Ips(StackId::Invalid()), IsEmpty());
  EXPECT_FALSE(t.Unwound(StackId(7)));
  EXPECT_FALSE(t.Unwound(StackId::Invalid()));
}

TEST(StackTableTest, TheUnwoundFlagIsTheFirstInterningsAndDoesNotSplitAStack) {
  StackTable t;
  const std::vector<uint64_t> ips = {0x10, 0x20};
  const StackId a = t.Intern(ips, /*unwound=*/true);
  EXPECT_TRUE(t.Unwound(a));
  EXPECT_EQ(t.Intern(ips, /*unwound=*/false), a);
  EXPECT_TRUE(t.Unwound(a));
  const std::vector<uint64_t> fp = {0x30};
  EXPECT_FALSE(t.Unwound(t.Intern(fp)));
}

TEST(StackTableTest, AReservedIdIsEmptyUntilBoundThenFoundByIntern) {
  StackTable t;
  const StackId late = t.Reserve();
  ASSERT_TRUE(late.valid());
  EXPECT_THAT(t.Ips(late), IsEmpty());
  // The empty stack interned meanwhile is not the reserved id: binding it
  // later must not change what the empty stack is.
  const StackId empty = t.Intern({});
  EXPECT_NE(empty, late);
  const std::vector<uint64_t> ips = {0xaa, 0xbb, 0xcc};
  EXPECT_EQ(t.Bind(late, ips), late);  // new ips: the id itself
  EXPECT_THAT(t.Ips(late), ElementsAre(0xaa, 0xbb, 0xcc));
  EXPECT_TRUE(t.Unwound(late));  // Bind's default: ips from an unwinder
  EXPECT_EQ(t.Intern(ips), late);
  EXPECT_THAT(t.Ips(empty), IsEmpty());
  EXPECT_EQ(t.size(), 2u);
}

TEST(StackTableTest, BindingIpsInternedBeforeMakesAnAliasAndStoresNothing) {
  StackTable t;
  const std::vector<uint64_t> ips = {0x1, 0x2, 0x3, 0x4};
  const StackId first = t.Intern(ips, /*unwound=*/true);
  const StackId late = t.Reserve();
  const size_t total = t.num_frames();
  EXPECT_EQ(t.Bind(late, ips), first);
  EXPECT_THAT(t.Ips(late), ElementsAre(0x1, 0x2, 0x3, 0x4));  // an alias reads the same
  EXPECT_EQ(t.num_frames(), total);                                // not stored twice
  EXPECT_EQ(t.Intern(ips), first);                                // still the first id
  // Two reserved ids bound to the same new ips: the second is an alias of
  // the first.
  const StackId r1 = t.Reserve(), r2 = t.Reserve();
  const std::vector<uint64_t> other = {0x9};
  EXPECT_EQ(t.Bind(r1, other), r1);
  EXPECT_EQ(t.Bind(r2, other), r1);
  EXPECT_THAT(t.Ips(r2), ElementsAre(0x9));
}

TEST(StackTableTest, BindingAnInvalidOrUnknownIdChangesNothing) {
  StackTable t;
  const std::vector<uint64_t> ips = {0x5};
  EXPECT_FALSE(t.Bind(StackId::Invalid(), ips).valid());
  EXPECT_EQ(t.Bind(StackId(3), ips), StackId(3));
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.num_frames(), 0u);
}

TEST(StackTableTest, ManyStacksKeepTheirIdsAsTheTableGrows) {
  StackTable t;
  std::vector<StackId> ids;
  for (uint64_t i = 0; i < 3000; ++i) {
    const std::vector<uint64_t> ips = {i, i * 7, 0x400000};
    ids.push_back(t.Intern(ips));
  }
  for (uint64_t i = 0; i < 3000; ++i) {
    const std::vector<uint64_t> ips = {i, i * 7, 0x400000};
    ASSERT_EQ(t.Intern(ips), ids[i]) << i;
    ASSERT_THAT(t.Ips(ids[i]), ElementsAre(i, i * 7, 0x400000));
  }
  EXPECT_EQ(t.size(), 3000u);
}

// A service's stacks: deep, sharing their callers, differing near the leaf,
// met in any order (the walk's reuse of the previous stack's outer frames
// must not give one stack's id to another).
TEST(StackTableTest, StacksSharingCallersShareTheirFramesAndKeepTheirIds) {
  StackTable t;
  std::mt19937_64 rng(7);
  std::vector<std::vector<uint64_t>> stacks;
  for (int i = 0; i < 4000; ++i) {
    std::vector<uint64_t> s;
    const size_t depth = 1 + rng() % 30;
    // Outermost frames first (made so), a few choices per depth.
    for (size_t d = 0; d < depth; ++d) s.push_back(0x400000 + d * 0x100 + rng() % (d < 20 ? 2 : 5));
    std::reverse(s.begin(), s.end());  // leaf first
    stacks.push_back(s);
  }
  std::map<std::vector<uint64_t>, StackId> first;
  for (int round = 0; round < 2; ++round) {
    for (size_t i = 0; i < stacks.size(); ++i) {
      const size_t k = round == 0 ? i : rng() % stacks.size();
      const StackId id = t.Intern(stacks[k]);
      auto [it, fresh] = first.try_emplace(stacks[k], id);
      ASSERT_EQ(it->second, id) << k;
      ASSERT_EQ(t.Ips(id), stacks[k]) << k;
      if (fresh) {
        ASSERT_EQ(id.value(), first.size() - 1);  // ids dense, in order of first meeting
      }
    }
  }
  EXPECT_EQ(t.size(), first.size());
  size_t total = 0;
  for (const auto& [s, id] : first) total += s.size();
  EXPECT_LT(t.num_frames(), total / 2);  // shared callers stored once
}

TEST(StackTableTest, ThinningInPlaceKeepsTheKeptStacksInOrderAndInternsTheRestAfresh) {
  StackTable t;
  const std::vector<uint64_t> a = {0x10, 0x1, 0x0}, b = {0x20, 0x2, 0x0}, c = {0x30, 0x1, 0x0}, d = {0x40, 0x3};
  const StackId ia = t.Intern(a), ib = t.Intern(b, /*unwound=*/true), ic = t.Intern(c), id = t.Intern(d);
  const StackId reserved = t.Reserve();                   // bound later
  const StackId late = t.Reserve();
  EXPECT_EQ(t.Bind(late, c), ic);                         // late is c's alias
  const StackId empty = t.Intern({});
  const size_t bytes = t.bytes();
  // Keep b, the reserved id, c's alias (not c) and the empty stack.
  std::vector<bool> keep(t.size(), false);
  for (StackId s : {ib, reserved, late, empty}) keep[s.value()] = true;
  const StackTable::Kept k = t.Thin(keep);
  EXPECT_EQ(k.stacks[ia.value()], StackTable::Kept::kGone);
  EXPECT_EQ(k.stacks[id.value()], StackTable::Kept::kGone);
  const StackId nb(k.stacks[ib.value()]), nr(k.stacks[reserved.value()]), nl(k.stacks[late.value()]),
      ne(k.stacks[empty.value()]);
  EXPECT_EQ(nb, StackId(0));  // kept ids keep their order
  EXPECT_EQ(nr, StackId(1));
  EXPECT_EQ(nl, StackId(2));
  EXPECT_EQ(ne, StackId(3));
  EXPECT_EQ(t.size(), 4u);
  EXPECT_EQ(t.num_frames(), 5u);  // 0x0 <- 0x2 <- 0x20, 0x0 <- 0x1 <- 0x30
  EXPECT_LE(t.bytes(), bytes);
  EXPECT_THAT(t.Ips(nb), ElementsAre(0x20, 0x2, 0x0));
  EXPECT_TRUE(t.Unwound(nb));
  EXPECT_THAT(t.Ips(nl), ElementsAre(0x30, 0x1, 0x0));
  EXPECT_THAT(t.Ips(nr), IsEmpty());
  EXPECT_THAT(t.Ips(ne), IsEmpty());
  // Interning after the thinning dedupes against what is kept: the alias
  // whose stack went owns its ips now, the empty stack is still one.
  EXPECT_EQ(t.Intern(b), nb);
  EXPECT_EQ(t.Intern(c), nl);
  EXPECT_EQ(t.Intern({}), ne);
  // A stack that went, met again: a new id and its own frames, shared
  // callers found again.
  const StackId na = t.Intern(a);
  EXPECT_EQ(na, StackId(4));
  EXPECT_THAT(t.Ips(na), ElementsAre(0x10, 0x1, 0x0));
  EXPECT_EQ(t.num_frames(), 6u);
  EXPECT_EQ(t.Intern(a), na);
  // The reserved id binds under its new id.
  EXPECT_EQ(t.Bind(nr, d), nr);
  EXPECT_THAT(t.Ips(nr), ElementsAre(0x40, 0x3));
  EXPECT_EQ(t.Intern(d), nr);
  // Keeping nothing empties the table; it interns as a new one.
  const StackTable::Kept none = t.Thin(std::vector<bool>(t.size(), false));
  EXPECT_EQ(none.num_stacks, 0u);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.num_frames(), 0u);
  EXPECT_EQ(t.Intern(a), StackId(0));
  EXPECT_THAT(t.Ips(StackId(0)), ElementsAre(0x10, 0x1, 0x0));
}

TEST(StackTableTest, ThinningManyStacksInPlaceIsKeepingThem) {
  // Random stacks sharing callers, every third kept: the ips of each kept
  // one under its new id; each interned again finds it.
  std::mt19937_64 rng(42);
  StackTable t;
  std::vector<std::vector<uint64_t>> stacks;
  for (int i = 0; i < 5000; ++i) {
    std::vector<uint64_t> ips(1 + rng() % 12);
    for (uint64_t& ip : ips) ip = rng() % 8;
    if (t.Intern(ips).value() == stacks.size()) stacks.push_back(ips);
  }
  std::vector<bool> keep(t.size());
  for (size_t i = 0; i < keep.size(); ++i) keep[i] = i % 3 == 0;
  const StackTable::Kept k = t.Thin(keep);
  for (size_t i = 0; i < stacks.size(); ++i) {
    if (!keep[i]) continue;
    ASSERT_EQ(t.Ips(StackId(k.stacks[i])), stacks[i]) << i;
  }
  const size_t kept = t.size();
  for (size_t i = 0; i < stacks.size(); ++i) {
    if (keep[i]) {
      ASSERT_EQ(t.Intern(stacks[i]), StackId(k.stacks[i])) << i;
    }
  }
  EXPECT_EQ(t.size(), kept);
}

// The recorder's memory bound asks what a series of thinnings would keep
// of the table without thinning it (index_thinning.h EarliestCutWithin):
// for every thinning of the series, the buckets it keeps add up to the
// stacks and frames that thinning keeps, and Thin then holds no more.
TEST(StackTableTest, TheBytesEachThinningOfASeriesWouldKeepAreThoseItKeeps) {
  std::mt19937_64 rng(7);
  StackTable t;
  for (int i = 0; i < 3000; ++i) {
    std::vector<uint64_t> ips(1 + rng() % 10);
    for (uint64_t& ip : ips) ip = rng() % 6;
    t.Intern(ips);
  }
  // Bucket 0: kept by none; b: kept by thinnings 1..b (of 4).
  std::vector<uint16_t> last(t.size());
  for (uint16_t& b : last) b = static_cast<uint16_t>(rng() % 5);
  std::vector<size_t> bytes(6, 0);
  t.AddKeptBytes(last, &bytes);
  EXPECT_EQ(bytes[5], 0u);
  for (uint16_t j = 1; j <= 4; ++j) {
    SCOPED_TRACE(j);
    std::vector<bool> keep(t.size());
    for (size_t i = 0; i < keep.size(); ++i) keep[i] = last[i] >= j;
    const StackTable::Kept k = t.Keeping(keep);
    size_t kept = 0;
    for (uint16_t b = j; b < bytes.size(); ++b) kept += bytes[b];
    EXPECT_EQ(kept, StackTable::KeptBytes(k.num_stacks, k.num_frames));
    EXPECT_GT(k.num_frames, 0u);
  }
  // The last thinning's, made: what it holds then is within the count (the
  // root's node aside).
  std::vector<bool> keep(t.size());
  for (size_t i = 0; i < keep.size(); ++i) keep[i] = last[i] >= 4;
  const size_t before = t.CountedBytes();
  t.Thin(keep);
  EXPECT_LE(t.CountedBytes(), bytes[4] + 32);
  EXPECT_LT(t.CountedBytes(), before);
}

}  // namespace
}  // namespace pageblame::index

// StackTable beyond plain interning (index_test.cc): leaf-first order kept,
// the unwound flag, and ids reserved before their ips are known.
#include "processor/index/stack_table.h"

#include <cstdint>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pageblame::index {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<uint64_t> Ips(absl::Span<const uint64_t> s) { return {s.begin(), s.end()}; }

TEST(StackTableTest, GetGivesTheIpsLeafFirstAsInterned) {
  StackTable t;
  const std::vector<uint64_t> leaf_first = {0x7f0000001000, 0x401234, 0x400100};
  const std::vector<uint64_t> reversed = {0x400100, 0x401234, 0x7f0000001000};
  const StackId a = t.Intern(leaf_first);
  const StackId b = t.Intern(reversed);
  EXPECT_NE(a, b);  // order is part of a stack
  EXPECT_THAT(Ips(t.Get(a)), ElementsAre(0x7f0000001000, 0x401234, 0x400100));
  EXPECT_THAT(Ips(t.Get(b)), ElementsAre(0x400100, 0x401234, 0x7f0000001000));
  // A stack that is a suffix of another (same callers, one frame less).
  const std::vector<uint64_t> suffix = {0x401234, 0x400100};
  const StackId c = t.Intern(suffix);
  EXPECT_NE(c, a);
  EXPECT_THAT(Ips(t.Get(c)), ElementsAre(0x401234, 0x400100));
  EXPECT_EQ(t.size(), 3u);
  // all_ips: every stack's ips, one stack after another.
  EXPECT_THAT(Ips(t.all_ips()), ElementsAre(0x7f0000001000, 0x401234, 0x400100, 0x400100, 0x401234,
                                            0x7f0000001000, 0x401234, 0x400100));
}

TEST(StackTableTest, TheEmptyStackIsOneStack) {
  StackTable t;
  const StackId e1 = t.Intern({});
  const StackId e2 = t.Intern({});
  EXPECT_TRUE(e1.valid());
  EXPECT_EQ(e1, e2);
  EXPECT_THAT(Ips(t.Get(e1)), IsEmpty());
  const std::vector<uint64_t> one = {0};  // an ip of 0 is not "no ips"
  EXPECT_NE(t.Intern(one), e1);
  EXPECT_EQ(t.size(), 2u);
}

TEST(StackTableTest, UnknownIdsGiveNothing) {
  StackTable t;
  const std::vector<uint64_t> ips = {1, 2};
  t.Intern(ips);
  EXPECT_THAT(Ips(t.Get(StackId(1))), IsEmpty());
  EXPECT_THAT(Ips(t.Get(StackId::Invalid())), IsEmpty());
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
  EXPECT_THAT(Ips(t.Get(late)), IsEmpty());
  // The empty stack interned meanwhile is not the reserved id: binding it
  // later must not change what the empty stack is.
  const StackId empty = t.Intern({});
  EXPECT_NE(empty, late);
  const std::vector<uint64_t> ips = {0xaa, 0xbb, 0xcc};
  EXPECT_EQ(t.Bind(late, ips), late);  // new ips: the id itself
  EXPECT_THAT(Ips(t.Get(late)), ElementsAre(0xaa, 0xbb, 0xcc));
  EXPECT_TRUE(t.Unwound(late));  // Bind's default: ips from an unwinder
  EXPECT_EQ(t.Intern(ips), late);
  EXPECT_THAT(Ips(t.Get(empty)), IsEmpty());
  EXPECT_EQ(t.size(), 2u);
}

TEST(StackTableTest, BindingIpsInternedBeforeMakesAnAliasAndStoresNothing) {
  StackTable t;
  const std::vector<uint64_t> ips = {0x1, 0x2, 0x3, 0x4};
  const StackId first = t.Intern(ips, /*unwound=*/true);
  const StackId late = t.Reserve();
  const size_t total = t.total_ips();
  EXPECT_EQ(t.Bind(late, ips), first);
  EXPECT_THAT(Ips(t.Get(late)), ElementsAre(0x1, 0x2, 0x3, 0x4));  // an alias reads the same
  EXPECT_EQ(t.total_ips(), total);                                // not stored twice
  EXPECT_EQ(t.Intern(ips), first);                                // still the first id
  // Two reserved ids bound to the same new ips: the second is an alias of
  // the first.
  const StackId r1 = t.Reserve(), r2 = t.Reserve();
  const std::vector<uint64_t> other = {0x9};
  EXPECT_EQ(t.Bind(r1, other), r1);
  EXPECT_EQ(t.Bind(r2, other), r1);
  EXPECT_THAT(Ips(t.Get(r2)), ElementsAre(0x9));
}

TEST(StackTableTest, BindingAnInvalidOrUnknownIdChangesNothing) {
  StackTable t;
  const std::vector<uint64_t> ips = {0x5};
  EXPECT_FALSE(t.Bind(StackId::Invalid(), ips).valid());
  EXPECT_EQ(t.Bind(StackId(3), ips), StackId(3));
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.total_ips(), 0u);
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
    ASSERT_THAT(Ips(t.Get(ids[i])), ElementsAre(i, i * 7, 0x400000));
  }
  EXPECT_EQ(t.size(), 3000u);
}

}  // namespace
}  // namespace pageblame::index

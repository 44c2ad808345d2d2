// StringTable: one id per distinct string, views that stay valid, and
// concurrent interning from the loader's two threads.
#include "processor/index/string_table.h"

#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace pageblame::index {
namespace {

TEST(StringTableTest, OneIdPerDistinctStringAndGetGivesItBack) {
  StringTable t;
  const StringId libc = t.Intern("/usr/lib/x86_64-linux-gnu/libc.so.6");
  const StringId heap = t.Intern("[heap]");
  EXPECT_TRUE(libc.valid());
  EXPECT_NE(libc, heap);
  // The same text from another buffer is the same string.
  const std::string again = std::string("[he") + "ap]";
  EXPECT_EQ(t.Intern(again), heap);
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.Get(libc), "/usr/lib/x86_64-linux-gnu/libc.so.6");
  EXPECT_EQ(t.Get(heap), "[heap]");
}

// The recorder's memory bound counts the table (TraceIndex::BoundedBytes):
// each distinct string adds its slot, a long one its characters too; a
// string met again adds nothing.
TEST(StringTableTest, ItsBytesGrowWithTheDistinctStringsAndTheirLength) {
  StringTable t;
  const size_t empty = t.bytes();
  t.Intern("[heap]");
  const size_t one = t.bytes();
  EXPECT_GE(one, empty + sizeof(std::string));
  const std::string path(1000, 'p');
  t.Intern(path);
  const size_t two = t.bytes();
  EXPECT_GE(two, one + sizeof(std::string) + path.size());
  t.Intern(path);
  t.Intern("[heap]");
  EXPECT_EQ(t.bytes(), two);
}

TEST(StringTableTest, EmptyAndEmbeddedNulStringsAreStringsLikeAnyOther) {
  StringTable t;
  const StringId empty = t.Intern("");
  EXPECT_TRUE(empty.valid());
  EXPECT_EQ(t.Get(empty), "");
  const std::string with_nul("a\0b", 3);
  const StringId a = t.Intern("a");
  const StringId anb = t.Intern(with_nul);
  EXPECT_NE(a, anb);
  EXPECT_EQ(t.Get(anb), with_nul);
  EXPECT_EQ(t.Get(anb).size(), 3u);
  EXPECT_EQ(t.size(), 3u);
}

TEST(StringTableTest, InvalidOrUnknownIdsGiveTheEmptyString) {
  StringTable t;
  t.Intern("x");
  EXPECT_EQ(t.Get(StringId::Invalid()), "");
  EXPECT_EQ(t.Get(StringId(1)), "");
  EXPECT_EQ(t.Get(StringId(12345)), "");
}

TEST(StringTableTest, ViewsStayValidWhileTheTableGrows) {
  StringTable t;
  const StringId first = t.Intern("comm-0");
  const std::string_view view = t.Get(first);
  const char* data = view.data();
  for (int i = 1; i < 5000; ++i) t.Intern("comm-" + std::to_string(i));
  EXPECT_EQ(t.Get(first).data(), data);  // not moved
  EXPECT_EQ(view, "comm-0");
  EXPECT_EQ(t.Get(StringId(4999)), "comm-4999");
}

TEST(StringTableTest, TwoThreadsInterningTheSameNamesAgreeOnTheirIds) {
  StringTable t;
  constexpr int kNames = 2000;
  std::vector<StringId> a(kNames), b(kNames);
  std::thread other([&] {
    for (int i = kNames - 1; i >= 0; --i) b[i] = t.Intern("name-" + std::to_string(i));
  });
  for (int i = 0; i < kNames; ++i) a[i] = t.Intern("name-" + std::to_string(i));
  other.join();
  EXPECT_EQ(a, b);
  EXPECT_EQ(t.size(), static_cast<size_t>(kNames));
  for (int i = 0; i < kNames; ++i) ASSERT_EQ(t.Get(a[i]), "name-" + std::to_string(i));
}

}  // namespace
}  // namespace pageblame::index

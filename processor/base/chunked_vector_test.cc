#include "processor/base/chunked_vector.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace pageblame {
namespace {

TEST(ChunkedVectorTest, IndexesAcrossBlocksAndNeverMovesAnElement) {
  ChunkedVector<uint64_t, /*kBytesPerBlock=*/64> v;  // blocks of 8
  EXPECT_TRUE(v.empty());
  std::vector<const uint64_t*> where;
  for (uint64_t i = 0; i < 100; ++i) {
    EXPECT_EQ(v.push_back(i * 3), i);
    where.push_back(&v[i]);
  }
  EXPECT_EQ(v.size(), 100u);
  for (uint64_t i = 0; i < 100; ++i) {
    EXPECT_EQ(v[i], i * 3);
    EXPECT_EQ(&v[i], where[i]) << "element " << i << " moved";
  }
  v[42] = 7;
  const ChunkedVector<uint64_t, 64>& c = v;
  EXPECT_EQ(c[42], 7u);
  EXPECT_EQ(c[41], 41u * 3);
}

TEST(ChunkedVectorTest, ElementsWithStateAreCopiedInAndDestroyed) {
  // Blocks are raw mappings: each element must be constructed on push_back
  // (a string that was never constructed would crash here) and destroyed
  // with the vector (the shared_ptr's count says so).
  auto token = std::make_shared<int>(7);
  {
    using Elem = std::pair<std::string, std::shared_ptr<int>>;
    ChunkedVector<Elem, 4 * sizeof(Elem)> v;  // blocks of 4
    for (int i = 0; i < 10; ++i) v.push_back({std::string(40, static_cast<char>('a' + i)), token});
    EXPECT_EQ(token.use_count(), 11);
    EXPECT_EQ(v[9].first, std::string(40, 'j'));
    v[3].first += "!";
    EXPECT_EQ(v[3].first.back(), '!');
    EXPECT_EQ(v.bytes(), 3 * 4 * sizeof(v[0]));
  }
  EXPECT_EQ(token.use_count(), 1);
}

TEST(ChunkedVectorTest, ReserveMakesTheBlocksAheadAndNothingMoves) {
  ChunkedVector<uint64_t, 64> v;  // blocks of 8
  v.Reserve(0);
  EXPECT_EQ(v.bytes(), 0u);
  v.Reserve(9);
  EXPECT_EQ(v.bytes(), 2 * 8 * sizeof(uint64_t));
  std::vector<const uint64_t*> where;
  for (uint64_t i = 0; i < 9; ++i) {
    v.push_back(i);
    where.push_back(&v[i]);
  }
  EXPECT_EQ(v.bytes(), 2 * 8 * sizeof(uint64_t)) << "push_back made a block Reserve had made";
  v.Reserve(7);  // 16 of 16: still enough
  EXPECT_EQ(v.bytes(), 2 * 8 * sizeof(uint64_t));
  v.Reserve(8);
  EXPECT_EQ(v.bytes(), 3 * 8 * sizeof(uint64_t));
  for (uint64_t i = 9; i < 30; ++i) v.push_back(i);
  for (uint64_t i = 0; i < 30; ++i) EXPECT_EQ(v[i], i);
  for (uint64_t i = 0; i < 9; ++i) EXPECT_EQ(&v[i], where[i]);
  EXPECT_EQ(v.bytes(), 4 * 8 * sizeof(uint64_t));
}

TEST(ChunkedVectorTest, TruncateDestroysTheRestAndGivesBackTheirBlocks) {
  auto token = std::make_shared<int>(7);
  using Elem = std::pair<uint64_t, std::shared_ptr<int>>;
  ChunkedVector<Elem, 4 * sizeof(Elem)> v;  // blocks of 4
  for (uint64_t i = 0; i < 10; ++i) v.push_back({i, token});
  EXPECT_EQ(v.bytes(), 3 * 4 * sizeof(Elem));
  v.Truncate(5);  // 2 blocks still needed
  EXPECT_EQ(v.size(), 5u);
  EXPECT_EQ(token.use_count(), 6) << "the elements past 5 were not destroyed";
  EXPECT_EQ(v.bytes(), 2 * 4 * sizeof(Elem));
  // Appending goes on where the kept ones end, over the destroyed slots.
  for (uint64_t i = 5; i < 9; ++i) EXPECT_EQ(v.push_back({i * 10, token}), i);
  EXPECT_EQ(v[4].first, 4u);
  EXPECT_EQ(v[5].first, 50u);
  EXPECT_EQ(v[8].first, 80u);
  EXPECT_EQ(v.bytes(), 3 * 4 * sizeof(Elem));
  v.Truncate(0);
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.bytes(), 0u);
  EXPECT_EQ(token.use_count(), 1);
  v.push_back({1, nullptr});
  EXPECT_EQ(v.size(), 1u);
}

TEST(ChunkedVectorTest, ABlockHoldsTheWholeElementsThatFitItsBytes) {
  // 24-byte elements in 100-byte blocks: 4 per block, 4 bytes unused.
  struct Elem {
    uint64_t a, b, c;
  };
  ChunkedVector<Elem, 100> v;
  static_assert(decltype(v)::kBlock == 4);
  for (uint64_t i = 0; i < 9; ++i) v.push_back({i, i + 1, i + 2});
  EXPECT_EQ(v.bytes(), 3 * 100u);
  for (uint64_t i = 0; i < 9; ++i) {
    EXPECT_EQ(v[i].a, i);
    EXPECT_EQ(v[i].c, i + 2);
  }
  // The first element of each block starts it.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(&v[4]) % 4096, 0u);
  EXPECT_EQ(&v[3] + 1, &v[0] + 4) << "elements of a block are contiguous";
  // The default: one 2 MiB block.
  EXPECT_EQ(ChunkedVector<Elem>::kBlockBytes, size_t{2} << 20);
  EXPECT_EQ(ChunkedVector<Elem>::kBlock, (size_t{2} << 20) / sizeof(Elem));
}

}  // namespace
}  // namespace pageblame

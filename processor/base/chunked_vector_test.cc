#include "processor/base/chunked_vector.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace pageblame {
namespace {

TEST(ChunkedVectorTest, IndexesAcrossBlocksAndNeverMovesAnElement) {
  ChunkedVector<uint64_t, /*kShift=*/3> v;  // blocks of 8
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
  const ChunkedVector<uint64_t, 3>& c = v;
  EXPECT_EQ(c[42], 7u);
  EXPECT_EQ(c[41], 41u * 3);
}

}  // namespace
}  // namespace pageblame

#include "processor/base/block_pool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "processor/base/chunked_vector.h"

namespace pageblame {
namespace {

const size_t kPage = static_cast<size_t>(::sysconf(_SC_PAGESIZE));

// Pages of [p, p + n) that are resident, by mincore(2).
size_t ResidentPages(void* p, size_t n) {
  std::vector<unsigned char> vec((n + kPage - 1) / kPage);
  if (::mincore(p, n, vec.data()) != 0) return SIZE_MAX;
  size_t resident = 0;
  for (unsigned char v : vec) resident += v & 1;
  return resident;
}

TEST(BlockPoolTest, PreparesUpToTheTotalOrTheReadyCap) {
  BlockPool pool(4 * kPage);
  pool.Prepare(/*total=*/3, /*max_ready=*/5);
  EXPECT_EQ(pool.ready(), 3u);
  EXPECT_EQ(pool.made(), 3u);
  pool.Prepare(/*total=*/10, /*max_ready=*/4);  // the cap stops it first
  EXPECT_EQ(pool.ready(), 4u);
  EXPECT_EQ(pool.made(), 4u);
  // A block made ahead is resident and zeroed, like a new one.
  void* b = pool.Take();
  EXPECT_EQ(ResidentPages(b, 4 * kPage), 4u);
  EXPECT_EQ(static_cast<unsigned char*>(b)[4 * kPage - 1], 0);
  EXPECT_EQ(pool.ready(), 3u);
  EXPECT_EQ(pool.made(), 4u);  // taken blocks still count as made
  pool.Prepare(/*total=*/4, /*max_ready=*/10);  // 4 made already: nothing
  EXPECT_EQ(pool.ready(), 3u);
  ::munmap(b, 4 * kPage);
}

TEST(BlockPoolTest, TakeMakesABlockWhenNoneIsReady) {
  BlockPool pool(2 * kPage);
  void* b = pool.Take();
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(pool.made(), 1u);
  EXPECT_EQ(pool.ready(), 0u);
  std::memset(b, 0xab, 2 * kPage);  // all of it is ours
  // Made ahead: the total counts the block taken before.
  pool.Prepare(/*total=*/2, /*max_ready=*/8);
  EXPECT_EQ(pool.ready(), 1u);
  ::munmap(b, 2 * kPage);
}

TEST(BlockPoolTest, ChunkedVectorTakesTheReadyBlocks) {
  using Vec = ChunkedVector<uint64_t, /*kBytesPerBlock=*/8192>;  // 8 KiB blocks
  BlockPool pool(Vec::kBlockBytes);
  pool.Prepare(2, 2);
  {
    Vec v(&pool);
    for (uint64_t i = 0; i < Vec::kBlock + 1; ++i) v.push_back(i);  // two blocks
    EXPECT_EQ(pool.ready(), 0u);
    EXPECT_EQ(pool.made(), 2u);
    v.push_back(1);
    v.Reserve(Vec::kBlock);  // a third, made on the spot
    EXPECT_EQ(pool.made(), 3u);
    EXPECT_EQ(v[Vec::kBlock], Vec::kBlock);
  }  // the vector unmaps the blocks it took
  EXPECT_EQ(pool.ready(), 0u);
}

TEST(BlockPoolTest, BlocksAVectorTruncatesAreReadyForItsNextPushBacks) {
  using Vec = ChunkedVector<uint64_t, /*kBytesPerBlock=*/8192>;
  BlockPool pool(Vec::kBlockBytes);
  Vec v(&pool);
  for (uint64_t i = 0; i < 3 * Vec::kBlock; ++i) v.push_back(i);  // three blocks
  EXPECT_EQ(pool.made(), 3u);
  std::vector<void*> given;
  for (size_t b = 1; b < 3; ++b) given.push_back(&v[b * Vec::kBlock]);
  v.Truncate(Vec::kBlock - 1);  // one block kept, two given back
  EXPECT_EQ(v.size(), Vec::kBlock - 1);
  EXPECT_EQ(v.bytes(), Vec::kBlockBytes);
  EXPECT_EQ(pool.ready(), 2u);
  EXPECT_EQ(pool.made(), 3u);  // still made: nothing to make again
  for (void* b : given) EXPECT_EQ(ResidentPages(b, Vec::kBlockBytes), Vec::kBlockBytes / kPage);
  pool.Prepare(/*total=*/3, /*max_ready=*/8);  // wanted again: they are there
  EXPECT_EQ(pool.ready(), 2u);
  // Growing back takes them, as they were left (not zeroed), and every
  // element reads as written: the kept ones, and the new ones over old values.
  for (uint64_t i = Vec::kBlock - 1; i < 3 * Vec::kBlock; ++i) v.push_back(i + 1000);
  EXPECT_EQ(pool.ready(), 0u);
  EXPECT_EQ(pool.made(), 3u);
  for (uint64_t i = 0; i < 3 * Vec::kBlock; ++i) {
    ASSERT_EQ(v[i], i < Vec::kBlock - 1 ? i : i + 1000) << i;
  }
  std::vector<void*> taken = {&v[Vec::kBlock], &v[2 * Vec::kBlock]};
  std::sort(given.begin(), given.end());
  std::sort(taken.begin(), taken.end());
  EXPECT_EQ(taken, given);  // the same mappings, not new ones
  v.Truncate(0);  // every block given back
  EXPECT_EQ(pool.ready(), 3u);
  pool.Unmapped(5);  // (a taker that unmaps) never below zero
  EXPECT_EQ(pool.made(), 0u);
}

TEST(BlockPoolTest, AVectorWithoutAPoolUnmapsTheBlocksItTruncates) {
  using Vec = ChunkedVector<uint64_t, /*kBytesPerBlock=*/8192>;
  Vec v;
  for (uint64_t i = 0; i < 2 * Vec::kBlock; ++i) v.push_back(i);
  void* second = &v[Vec::kBlock];
  v.Truncate(1);
  EXPECT_EQ(v.bytes(), Vec::kBlockBytes);
  EXPECT_EQ(ResidentPages(second, Vec::kBlockBytes), SIZE_MAX);  // mincore: ENOMEM, not mapped
  EXPECT_EQ(v[0], 0u);
}

TEST(BlockPoolTest, HugePageSizedBlocksAreAlignedResidentAndZeroed) {
  // Whether the kernel gives huge pages depends on the system (THP); the
  // block's alignment and contents do not.
  constexpr size_t kBytes = 2 * BlockPool::kHugePageBytes;
  BlockPool pool(kBytes);
  pool.Prepare(1, 1);
  for (void* b : {pool.Take(), pool.Take()}) {  // made ahead, then on the spot
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % BlockPool::kHugePageBytes, 0u);
    EXPECT_EQ(ResidentPages(b, kBytes), kBytes / kPage);
    const unsigned char* c = static_cast<const unsigned char*>(b);
    EXPECT_EQ(std::count(c, c + kBytes, 0), static_cast<ptrdiff_t>(kBytes));
    std::memset(b, 0xab, kBytes);  // all of it is ours
    EXPECT_EQ(::munmap(b, kBytes), 0);
  }
}

TEST(BlockPoolTest, OneThreadPreparesWhileAnotherTakes) {
  // The loader prepares while the replay thread takes (ThreadSanitizer runs
  // this in scripts/test): every block is handed out once.
  BlockPool pool(kPage);
  constexpr int kBlocks = 200;
  std::vector<void*> taken;
  std::thread maker([&] {
    for (int i = 1; i <= kBlocks; ++i) pool.Prepare(i, 4);
  });
  for (int i = 0; i < kBlocks; ++i) {
    void* b = pool.Take();
    *static_cast<volatile int*>(b) = i;
    taken.push_back(b);
  }
  maker.join();
  std::vector<void*> sorted = taken;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
  EXPECT_LE(pool.made(), static_cast<size_t>(kBlocks) + 4);
  EXPECT_EQ(pool.made(), taken.size() + pool.ready());
  for (void* b : taken) ::munmap(b, kPage);
}

}  // namespace
}  // namespace pageblame

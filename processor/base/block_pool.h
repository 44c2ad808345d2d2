// Blocks for a ChunkedVector, made ahead by whichever thread has time.
//
// A ChunkedVector block is a populated anonymous mapping: the kernel zeroes
// and maps every page of it, a cost that lands on whichever thread makes
// it. With a pool, the reader makes blocks while it would wait anyway
// (TraceIndex::PrepareBlocks), and the replay thread takes them ready.
//
// Blocks whose size is a multiple of 2 MiB are huge pages where the kernel
// has them (transparent huge pages, asked for with MADV_HUGEPAGE; it needs
// THP "always" or "madvise", the default): on a VM the first write to each
// 4 KiB page costs extra whoever populated it, and a 2 MiB page is one such
// cost instead of 512 (the measurements: bench/HISTORY.md).
//
//   BlockPool pool(1 << 20);
//   pool.Prepare(/*total=*/4, /*max_ready=*/2);  // any thread: 2 made ahead
//   void* b = pool.Take();  // any thread: a ready block, else a new one
//   pool.GiveBack({b});     // ready again (not zeroed), or munmap it
//
// Every block is a mapping of block_bytes() from MakeBlock(); whoever takes
// one owns it and unmaps it with munmap(2) or gives it back. A block given
// back is not zeroed: Take() hands out zeroed memory only when it makes
// it. Thread-safe.
#ifndef PAGEBLAME_BASE_BLOCK_POOL_H_
#define PAGEBLAME_BASE_BLOCK_POOL_H_

#include <cstddef>
#include <mutex>
#include <vector>

namespace pageblame {

class BlockPool {
 public:
  static constexpr size_t kHugePageBytes = size_t{2} << 20;

  explicit BlockPool(size_t block_bytes) : block_bytes_(block_bytes) {}
  ~BlockPool();
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  // A new block of `bytes`, resident and zeroed, aligned to 2 MiB and made
  // of huge pages if `bytes` is a multiple of that and the kernel has them;
  // throws std::bad_alloc if the system has no memory for it, as operator
  // new would. Unmap it with munmap(b, bytes).
  static void* MakeBlock(size_t bytes);

  size_t block_bytes() const { return block_bytes_; }
  // A ready block, or else a new one.
  void* Take();
  // Makes blocks ahead until `total` blocks have been made in all (taken or
  // ready) or `max_ready` are ready, whichever comes first. Blocks are made
  // outside the lock: a Take() meanwhile is not held up by system calls.
  void Prepare(size_t total, size_t max_ready);
  size_t ready() const;
  size_t made() const;  // taken and ready
  // A taker unmapped `n` blocks it took: they no longer count as made, so
  // that Prepare's `total` (the blocks wanted now) makes them again only
  // when they are wanted again.
  void Unmapped(size_t n);
  // A taker gives back blocks it took (their contents as it left them:
  // takers construct what they store, ChunkedVector): ready again for the
  // next Take(), still counted as made. Neither zeroed nor faulted in
  // again, so a table that shrinks and grows back costs no system call.
  void GiveBack(const std::vector<void*>& blocks);

 private:
  const size_t block_bytes_;
  mutable std::mutex mu_;
  std::vector<void*> ready_;
  size_t made_ = 0;
};

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_BLOCK_POOL_H_

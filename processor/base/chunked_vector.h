// An append-only array stored in fixed blocks of kBlockBytes. The index
// tables (calls, versions) grow to millions of entries during replay; a
// std::vector would copy the whole table at every doubling, keep up to twice
// the memory it needs at its peak (old and new buffers together), and move
// every element (so no reference survives a push_back). Here a push_back
// never moves anything: references stay valid and memory is at most one
// block over what is used (or reserved).
//
//   ChunkedVector<Version> versions;
//   size_t i = versions.push_back(v);   // index of the new element
//   versions[i].t_to = t;
//
// A block is one anonymous mapping, made resident when it is made
// (BlockPool::MakeBlock): one system call per block instead of a page fault
// per 4 KiB page as elements are written. By default a block is one 2 MiB
// huge page and holds as many whole elements as fit (kBlock, not a power of
// two: indexing divides by a constant, which the compiler turns into a
// multiply). Elements are constructed in place on push_back (the kernel's
// zero pages are not written twice). With a BlockPool (of kBlockBytes
// blocks), blocks come from it: ready ones that another thread made ahead,
// else new ones.
#ifndef PAGEBLAME_BASE_CHUNKED_VECTOR_H_
#define PAGEBLAME_BASE_CHUNKED_VECTOR_H_

#include <sys/mman.h>

#include <cstddef>
#include <new>
#include <vector>

#include "processor/base/block_pool.h"

namespace pageblame {

template <typename T, size_t kBytesPerBlock = BlockPool::kHugePageBytes>
class ChunkedVector {
 public:
  static constexpr size_t kBlockBytes = kBytesPerBlock;
  static constexpr size_t kBlock = kBlockBytes / sizeof(T);  // elements per block

  ChunkedVector() = default;
  // Takes ready blocks from `pool` (blocks of kBlockBytes; not owned, must
  // outlive this) before making its own.
  explicit ChunkedVector(BlockPool* pool) : pool_(pool) {}
  ~ChunkedVector() {
    for (size_t i = 0; i < size_; ++i) (*this)[i].~T();
    for (T* b : blocks_) ::munmap(b, kBlockBytes);
  }
  ChunkedVector(const ChunkedVector&) = delete;
  ChunkedVector& operator=(const ChunkedVector&) = delete;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Bytes held: whole blocks, used or not.
  size_t bytes() const { return blocks_.size() * kBlockBytes; }

  // Makes room for `n` more elements now, so that the next n push_backs make
  // no block (a caller with idle time can take the cost of making blocks
  // resident off its busy time).
  void Reserve(size_t n) {
    while (blocks_.size() * kBlock < size_ + n) AddBlock();
  }

  // Appends `v`; returns its index.
  size_t push_back(const T& v) {
    if (size_ == blocks_.size() * kBlock) AddBlock();
    new (&(*this)[size_]) T(v);
    return size_++;
  }

  // Keeps the first `n` elements (n <= size()) and gives back the blocks
  // past them: to the pool, ready for this table's next push_backs, if it
  // has one (the recorder thins its tables to 3/4 of --max-memory and they
  // grow back to it before the next thinning: a block made anew was the
  // kernel zeroing it again, ~9 % of a folded call's CPU on the 2-core VM,
  // bench/HISTORY.md), else to the system.
  void Truncate(size_t n) {
    for (size_t i = n; i < size_; ++i) (*this)[i].~T();
    size_ = n;
    const size_t keep = (n + kBlock - 1) / kBlock;
    if (pool_ != nullptr && blocks_.size() > keep) {
      pool_->GiveBack(std::vector<void*>(blocks_.begin() + keep, blocks_.end()));
    } else {
      for (size_t b = keep; b < blocks_.size(); ++b) ::munmap(blocks_[b], kBlockBytes);
    }
    blocks_.resize(keep);
  }

  T& operator[](size_t i) { return blocks_[i / kBlock][i % kBlock]; }
  const T& operator[](size_t i) const { return blocks_[i / kBlock][i % kBlock]; }

 private:
  static_assert(alignof(T) <= 4096, "blocks are page-aligned");
  static_assert(kBlock > 0, "a block holds at least one element");

  void AddBlock() {
    void* m = pool_ != nullptr ? pool_->Take() : BlockPool::MakeBlock(kBlockBytes);
    blocks_.push_back(static_cast<T*>(m));
  }

  BlockPool* pool_ = nullptr;
  std::vector<T*> blocks_;
  size_t size_ = 0;
};

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_CHUNKED_VECTOR_H_

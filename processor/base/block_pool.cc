#include "processor/base/block_pool.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

#include <new>

namespace pageblame {

BlockPool::~BlockPool() {
  for (void* b : ready_) ::munmap(b, block_bytes_);
}

namespace {

void* MapOrThrow(size_t bytes, int extra_flags) {
  void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | extra_flags, -1, 0);
  if (m == MAP_FAILED) throw std::bad_alloc();
  return m;
}

// `bytes` (a multiple of kHugePageBytes) at a 2 MiB boundary: a larger
// mapping with its unaligned ends cut off.
void* MapAligned(size_t bytes) {
  constexpr size_t kAlign = BlockPool::kHugePageBytes;
  char* m = static_cast<char*>(MapOrThrow(bytes + kAlign, 0));
  const uintptr_t at = (reinterpret_cast<uintptr_t>(m) + kAlign - 1) & ~uintptr_t{kAlign - 1};
  char* aligned = reinterpret_cast<char*>(at);
  if (aligned > m) ::munmap(m, aligned - m);
  ::munmap(aligned + bytes, m + kAlign - aligned);
  return aligned;
}

}  // namespace

void* BlockPool::MakeBlock(size_t bytes) {
  if (bytes == 0 || bytes % kHugePageBytes != 0) return MapOrThrow(bytes, MAP_POPULATE);
  void* m = MapAligned(bytes);
  // A hint: without THP (or with none free) the block is 4 KiB pages.
  ::madvise(m, bytes, MADV_HUGEPAGE);
  if (::madvise(m, bytes, MADV_POPULATE_WRITE) != 0) {
    if (errno != EINVAL) {  // ENOMEM and the like: no memory for it
      ::munmap(m, bytes);
      throw std::bad_alloc();
    }
    // A kernel before 5.14 has no MADV_POPULATE_WRITE: fault it in here.
    for (size_t i = 0; i < bytes; i += 4096) static_cast<volatile char*>(m)[i] = 0;
  }
  return m;
}

void* BlockPool::Take() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!ready_.empty()) {
      void* b = ready_.back();
      ready_.pop_back();
      return b;
    }
    ++made_;
  }
  return MakeBlock(block_bytes_);
}

void BlockPool::Unmapped(size_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  made_ -= std::min(n, made_);
}

void BlockPool::GiveBack(const std::vector<void*>& blocks) {
  std::lock_guard<std::mutex> lock(mu_);
  ready_.insert(ready_.end(), blocks.begin(), blocks.end());
}

void BlockPool::Prepare(size_t total, size_t max_ready) {
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (made_ >= total || ready_.size() >= max_ready) return;
      ++made_;  // counted now, so that a Take() meanwhile does not count it twice
    }
    void* b = MakeBlock(block_bytes_);
    std::lock_guard<std::mutex> lock(mu_);
    ready_.push_back(b);
  }
}

size_t BlockPool::ready() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ready_.size();
}

size_t BlockPool::made() const {
  std::lock_guard<std::mutex> lock(mu_);
  return made_;
}

}  // namespace pageblame

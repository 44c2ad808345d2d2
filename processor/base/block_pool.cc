#include "processor/base/block_pool.h"

#include <sys/mman.h>

#include <new>

namespace pageblame {

BlockPool::~BlockPool() {
  for (void* b : ready_) ::munmap(b, block_bytes_);
}

void* BlockPool::MakeBlock(size_t bytes) {
  void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (m == MAP_FAILED) throw std::bad_alloc();
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

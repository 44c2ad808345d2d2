#include "processor/base/sequential_pager.h"

#include <unistd.h>

#include <algorithm>

namespace pageblame {

SequentialPager::SequentialPager(const MappedFile* file, size_t begin, size_t end)
    : file_(file),
      end_(end),
      page_(static_cast<size_t>(::sysconf(_SC_PAGESIZE))),
      posted_(begin),
      target_(begin),
      handled_(begin - 1) {
  thread_ = std::thread([this] { Run(); });
}

SequentialPager::~SequentialPager() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void SequentialPager::Post(size_t pos) {
  posted_ = pos;
  {
    std::lock_guard<std::mutex> lock(mu_);
    target_ = pos;
  }
  wake_.notify_one();
}

void SequentialPager::Run() {
  // (posted_ belongs to the reader's thread: start from target_.)
  std::unique_lock<std::mutex> lock(mu_);
  // `released` stays page-aligned: the page the reader is in is given back
  // on a later step, not skipped for good (MappedFile::Release only drops
  // whole pages inside the range).
  size_t released = target_ / page_ * page_, populated = target_, seen = target_;
  bool first = true;  // map the first kAhead without waiting
  while (true) {
    wake_.wait(lock, [&] { return first || stop_ || target_ != seen; });
    first = false;
    if (stop_) return;
    const size_t reader = seen = target_;
    lock.unlock();
    // Behind the reader: give back. Ahead of it: map in.
    const size_t behind = reader == end_ ? end_ : reader / page_ * page_;
    if (behind > released) {
      file_->Release(released, behind - released);
      released = behind;
    }
    const size_t want = std::min(end_, reader + kAhead);
    if (want > populated) {
      const size_t from = std::max(populated, reader);
      file_->Populate(from, want - from);
      populated = want;
    }
    lock.lock();
    handled_ = reader;
    idle_.notify_all();
  }
}

void SequentialPager::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [this] { return handled_ == target_; });
}

}  // namespace pageblame

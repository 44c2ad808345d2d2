// Keeps the pages just ahead of a front-to-back reader of a MappedFile mapped,
// and gives back those behind it, on a thread of its own. Reading a big trace
// through mmap costs page faults (mapping the page cache in, 16 pages at a
// time) and MADV_DONTNEED calls to keep RSS flat; both are kernel work on the
// reading thread unless someone else does them first. This does them on the
// second core while the reader parses.
//
//   SequentialPager pager(file.get(), data_begin, data_end);
//   ... pager.Advance(pos);   // the reader no longer needs anything before pos
//
// Nothing changes for correctness: a page the pager has not reached yet just
// faults in on the reader's thread as before. Pages behind the reader are
// dropped from this process only; they stay in the page cache.
#ifndef PAGEBLAME_BASE_SEQUENTIAL_PAGER_H_
#define PAGEBLAME_BASE_SEQUENTIAL_PAGER_H_

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>

#include "processor/base/mapped_file.h"

namespace pageblame {

class SequentialPager {
 public:
  static constexpr size_t kStep = 2 << 20;   // work in steps this big
  static constexpr size_t kAhead = 8 << 20;  // map this much ahead of the reader

  // Starts paging [begin, end) of `file`, which must outlive the pager.
  SequentialPager(const MappedFile* file, size_t begin, size_t end);
  ~SequentialPager();
  SequentialPager(const SequentialPager&) = delete;
  SequentialPager& operator=(const SequentialPager&) = delete;

  // The reader is past everything before `pos`. Cheap: wakes the thread once
  // per kStep, and at the end.
  void Advance(size_t pos) {
    if (pos >= posted_ + kStep || (pos == end_ && pos != posted_)) Post(pos);
  }
  // Waits until the thread has caught up with the last position handed over
  // (tests use it to measure what is resident without racing the thread).
  void WaitIdle();

 private:
  void Post(size_t pos);
  void Run();

  const MappedFile* file_;
  const size_t end_;
  const size_t page_;  // the system's page size
  size_t posted_;  // reader thread: the last position handed over

  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  size_t target_;   // guarded by mu_: the reader's position
  size_t handled_;  // guarded by mu_: the last target the thread finished
  bool stop_ = false;
  std::thread thread_;  // last: starts once the rest exists
};

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_SEQUENTIAL_PAGER_H_

// DirWatch: sleeps until a name is moved into a directory (perf's cut:
// perf renames TRACE to TRACE.<stamp>, recorder/chunk_store.h), Wake() is
// called, or a time has passed. The folding thread of `record --max-size`
// waits for perf's next chunk with it instead of listing the directory
// every 50 ms: a listing and a stat of each of its files, 20 times a second
// whether perf cut or not, was a tenth of the folding's CPU at a few
// thousand calls a second, and more in a crowded directory.
//
//   DirWatch watch(dir_fd);
//   while (!found) { ...list...; watch.Wait(1000); }
//   // another thread: watch.Wake();   // the wait ends at once
//
// Without inotify (its per-user limits reached) or an eventfd, Wait sleeps
// kFallbackMs at most: the old polling.
#ifndef PAGEBLAME_RECORDER_DIR_WATCH_H_
#define PAGEBLAME_RECORDER_DIR_WATCH_H_

namespace pageblame::recorder {

class DirWatch {
 public:
  static constexpr int kFallbackMs = 50;

  // `dir_fd` is not kept (the watch is on the directory it names).
  explicit DirWatch(int dir_fd);
  ~DirWatch();
  DirWatch(const DirWatch&) = delete;
  DirWatch& operator=(const DirWatch&) = delete;

  // Returns once a name was moved into the directory since the last call,
  // Wake() was called since then, or after `timeout_ms`.
  void Wait(int timeout_ms);
  // Ends a Wait now, or the next one at once. Thread-safe.
  void Wake();
  bool watching() const { return inotify_ >= 0; }

 private:
  int inotify_ = -1;
  int wake_ = -1;  // an eventfd
};

}  // namespace pageblame::recorder

#endif  // PAGEBLAME_RECORDER_DIR_WATCH_H_

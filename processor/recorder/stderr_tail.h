// StderrTail: passes what a child writes on its standard error on to ours,
// line by line as it comes, and keeps its last lines, so that when the child
// fails the error can quote it ("perf record failed (exit 255): couldn't
// open /proc/1/task/1/maps").
//
//   StderrTail tail;                       // makes the pipe
//   if (fork() == 0) { tail.InChild(); execvp(...); }
//   tail.Start();                          // the parent's reading thread
//   ... waitpid ...
//   std::string last = tail.Finish();      // after the child (and its children) closed it
//
// Only for a child whose standard error is its own: a command it runs
// would inherit the pipe (and see no terminal), which is why `record` uses
// it only when it attaches.
#ifndef PAGEBLAME_RECORDER_STDERR_TAIL_H_
#define PAGEBLAME_RECORDER_STDERR_TAIL_H_

#include <mutex>
#include <string>
#include <thread>

namespace pageblame::recorder {

class StderrTail {
 public:
  static constexpr size_t kKept = 4096;  // bytes of the end kept

  StderrTail();
  ~StderrTail();
  StderrTail(const StderrTail&) = delete;
  StderrTail& operator=(const StderrTail&) = delete;

  // Whether the pipe could be made (else nothing is captured: the child
  // keeps our standard error).
  bool ok() const { return read_fd_ >= 0; }
  // In the child, before exec: its standard error becomes the pipe.
  void InChild() const;
  // In the parent, after fork: closes the write end and starts passing on.
  void Start();
  // Waits until every writer has closed the pipe, then returns the last
  // non-empty lines kept (at most kKept bytes), without the final newline.
  std::string Finish();

 private:
  void Pump();
  int read_fd_ = -1, write_fd_ = -1;
  std::thread reader_;
  std::mutex mu_;
  std::string kept_;
};

}  // namespace pageblame::recorder

#endif  // PAGEBLAME_RECORDER_STDERR_TAIL_H_

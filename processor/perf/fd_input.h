// Buffered sequential reads from a file descriptor (stdin, a FIFO, or a
// pipe-mode perf.data file), with a fixed-size buffer allocated once.
//
//   FdInput in(fd, /*owned=*/true);
//   ASSIGN_OR_RETURN(size_t got, in.Read(buf, 8));
//   if (got < 8) ...;  // end of stream
//
// Read()/Skip() return fewer bytes than asked only at the end of the stream;
// read errors other than EINTR are returned as a status.
#ifndef PAGEBLAME_PERF_FD_INPUT_H_
#define PAGEBLAME_PERF_FD_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"

namespace pageblame::perf {

class FdInput {
 public:
  static constexpr size_t kDefaultBufferSize = 256 * 1024;

  FdInput(int fd, bool owned, size_t buffer_size = kDefaultBufferSize);
  ~FdInput();
  FdInput(const FdInput&) = delete;
  FdInput& operator=(const FdInput&) = delete;

  // Copies up to `n` bytes to `dst`; returns how many were copied.
  absl::StatusOr<size_t> Read(void* dst, size_t n);
  // Discards up to `n` bytes; returns how many were discarded.
  absl::StatusOr<uint64_t> Skip(uint64_t n);
  // Bytes consumed from the stream so far.
  uint64_t offset() const { return offset_; }

 private:
  // Refills the buffer; false at end of stream.
  absl::StatusOr<bool> Fill();

  int fd_;
  bool owned_;
  std::unique_ptr<uint8_t[]> buf_;
  size_t capacity_;
  size_t begin_ = 0;  // [begin_, end_): buffered, unconsumed bytes
  size_t end_ = 0;
  uint64_t offset_ = 0;
};

}  // namespace pageblame::perf

#endif  // PAGEBLAME_PERF_FD_INPUT_H_

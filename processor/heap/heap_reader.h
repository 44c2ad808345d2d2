// HeapReader: the chunk walk's reads of one heap, front to back. A walk
// reads a 24-byte header, then the one `size` bytes on, and so on: read one
// by one, that is a system call (live) per header. HeapReader instead
// reads the heap in windows of kWindow bytes (TargetMemory::ReadBulk: a
// live process's present pages in a couple of system calls), or points
// straight into bytes this process already holds (a core's mapped file:
// TargetMemory::Contiguous), with no copy.
//
//   HeapReader r(&memory, heap_end);
//   if (const uint8_t* b = r.At(p + 8, 24)) { ... b[0..23] ... }
//
// A read going on from the end of the last one reads a window (cut at
// `limit`, rounded up to a page); any other read (a jump over a large
// chunk) reads only the pages it needs, so a heap of large chunks costs
// its headers' pages, not all its bytes. Where a window cannot be read
// (a hole, the end of a mapping), the pages asked for are read, else just
// the bytes: the walk finds the same bytes, only slower.
#ifndef PAGEBLAME_HEAP_HEAP_READER_H_
#define PAGEBLAME_HEAP_HEAP_READER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "processor/heap/target_memory.h"

namespace pageblame::heap {

class HeapReader {
 public:
  static constexpr uint64_t kWindow = 256 * 1024;
  static constexpr uint64_t kPage = 4096;

  HeapReader(TargetMemory* memory, uint64_t limit);

  // The `n` bytes at `addr` (n <= kPage), or nullptr if they cannot be
  // read. Valid until the next call.
  const uint8_t* At(uint64_t addr, size_t n);

 private:
  // Reads [start, end) into buf_; false (and nothing held) if it fails.
  bool Fill(uint64_t start, uint64_t end);

  TargetMemory* memory_;
  uint64_t limit_;
  absl::Span<const uint8_t> held_;  // bytes held by the target from held_start_ on
  uint64_t held_start_ = 0;
  std::vector<uint8_t> buf_;        // a copy of [start_, end_)
  uint64_t start_ = 0, end_ = 0;
};

}  // namespace pageblame::heap

#endif  // PAGEBLAME_HEAP_HEAP_READER_H_

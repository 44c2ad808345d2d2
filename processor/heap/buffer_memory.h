// BufferMemory: a target whose memory is given as bytes — the walker's unit
// tests build heaps in it, and the fuzz target (tests/fuzz/heap_walk_fuzzer)
// feeds it arbitrary images.
//
//   BufferMemory m(/*pid=*/7);
//   m.AddMapping({0x1000, 0x3000, true, true, false, 0, "[heap]"}, bytes);  // bytes.size() <= 0x2000
//   uint64_t w; m.ReadWord(0x1008, &w);
//
// A mapping's bytes past those given read as false, like a core's missing
// data. Mappings must be added in address order without overlap.
#ifndef PAGEBLAME_HEAP_BUFFER_MEMORY_H_
#define PAGEBLAME_HEAP_BUFFER_MEMORY_H_

#include <string>
#include <vector>

#include "processor/heap/target_memory.h"

namespace pageblame::heap {

class BufferMemory : public TargetMemory {
 public:
  explicit BufferMemory(uint32_t pid = 1) : pid_(pid) {}
  // False (and nothing added) if `m` is empty, overlaps or precedes the last
  // mapping, or `bytes` is longer than it.
  bool AddMapping(const TargetMapping& m, std::string bytes);
  // The bytes of the mapping holding `addr` (tests patch them), or nullptr.
  std::string* BytesAt(uint64_t addr);

  bool Read(uint64_t addr, void* out, size_t n) override;
  absl::Span<const uint8_t> Contiguous(uint64_t addr) const override;
  const std::vector<TargetMapping>& mappings() const override { return mappings_; }
  uint32_t pid() const override { return pid_; }
  bool live() const override { return false; }

 private:
  uint32_t pid_;
  std::vector<TargetMapping> mappings_;
  std::vector<std::string> bytes_;
};

}  // namespace pageblame::heap

#endif  // PAGEBLAME_HEAP_BUFFER_MEMORY_H_

#include "processor/heap/buffer_memory.h"

#include <cstring>

namespace pageblame::heap {

bool BufferMemory::AddMapping(const TargetMapping& m, std::string bytes) {
  if (m.end <= m.start || bytes.size() > m.end - m.start) return false;
  if (!mappings_.empty() && m.start < mappings_.back().end) return false;
  mappings_.push_back(m);
  bytes_.push_back(std::move(bytes));
  return true;
}

std::string* BufferMemory::BytesAt(uint64_t addr) {
  const TargetMapping* m = MappingAt(addr);
  return m == nullptr ? nullptr : &bytes_[m - mappings_.data()];
}

absl::Span<const uint8_t> BufferMemory::Contiguous(uint64_t addr) const {
  const TargetMapping* m = MappingAt(addr);
  if (m == nullptr) return {};
  const std::string& b = bytes_[m - mappings_.data()];
  const uint64_t at = addr - m->start;
  if (at >= b.size()) return {};
  return {reinterpret_cast<const uint8_t*>(b.data()) + at, b.size() - at};
}

bool BufferMemory::Read(uint64_t addr, void* out, size_t n) {
  const TargetMapping* m = MappingAt(addr);
  if (m == nullptr) return false;
  const std::string& b = bytes_[m - mappings_.data()];
  const uint64_t at = addr - m->start;
  if (at > b.size() || n > b.size() - at) return false;
  std::memcpy(out, b.data() + at, n);
  return true;
}

}  // namespace pageblame::heap

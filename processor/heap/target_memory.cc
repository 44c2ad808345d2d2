#include "processor/heap/target_memory.h"

#include <algorithm>

namespace pageblame::heap {

const TargetMapping* TargetMemory::MappingAt(uint64_t addr) const {
  const std::vector<TargetMapping>& m = mappings();
  auto it = std::upper_bound(m.begin(), m.end(), addr,
                             [](uint64_t a, const TargetMapping& t) { return a < t.start; });
  if (it == m.begin()) return nullptr;
  --it;
  return addr < it->end ? &*it : nullptr;
}

}  // namespace pageblame::heap

#include "processor/analysis/file_offset.h"

#include <vector>

namespace pageblame::analysis {

std::optional<uint64_t> FileOffsetAt(const index::TraceIndex& idx, const index::CallEvent& ev, uint64_t ip) {
  const std::vector<uint32_t> gens = idx.ProcessesWithPid(ev.pid);
  if (gens.empty()) return std::nullopt;
  uint32_t p = gens.front();
  for (uint32_t g : gens) {
    if (idx.process(g).t_start <= ev.time) p = g;
  }
  const VersionId id = idx.Lookup(p, ip, ev.time);
  if (!id.valid() || !idx.version(id).attrs.path.valid()) return std::nullopt;
  const index::Version& v = idx.version(id);
  return ip - v.start + v.attrs.pgoff;
}

}  // namespace pageblame::analysis

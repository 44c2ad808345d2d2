#include "processor/analysis/process_pids.h"

#include <algorithm>

namespace pageblame::analysis {

std::vector<uint32_t> ProcessPids(const index::TraceIndex& idx, const std::vector<uint32_t>& processes) {
  std::vector<uint32_t> pids;
  pids.reserve(processes.size());
  for (uint32_t p : processes) pids.push_back(idx.process(p).pid);
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  return pids;
}

}  // namespace pageblame::analysis

// The pids of a list of process entries, as `growth` names who it measured
// ("3 processes (pids 10, 11)"): an index has one entry per process
// lifetime, so a reused pid has several.
//
//   std::vector<uint32_t> pids = ProcessPids(idx, g.processes);
//
// In the entries' order; consecutive entries with the same pid give it once
// (entries of one pid that other pids separate each give it).
#ifndef PAGEBLAME_ANALYSIS_PROCESS_PIDS_H_
#define PAGEBLAME_ANALYSIS_PROCESS_PIDS_H_

#include <cstdint>
#include <vector>

#include "processor/index/trace_index.h"

namespace pageblame::analysis {

std::vector<uint32_t> ProcessPids(const index::TraceIndex& idx, const std::vector<uint32_t>& processes);

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_PROCESS_PIDS_H_

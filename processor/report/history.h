// What happened to one page of one process, oldest first: the versions that
// ever contained it, turned into changes ("created by mmap", "region split by
// munmap", "moved here by mremap from ...", "unmapped by munmap").
#ifndef PAGEBLAME_REPORT_HISTORY_H_
#define PAGEBLAME_REPORT_HISTORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "processor/index/trace_index.h"

namespace pageblame::report {

struct HistoryEntry {
  uint64_t time = 0;
  std::string change;   // created, before_trace, split, moved_in, forked, unmapped, replaced, moved_out, exec
  VersionId version;    // the version that began or ended
  EventId event;        // the call behind the change (invalid for fork/exec/before_trace)
};

std::vector<HistoryEntry> PageHistory(const index::TraceIndex& idx, uint32_t process, uint64_t addr);

}  // namespace pageblame::report

#endif  // PAGEBLAME_REPORT_HISTORY_H_

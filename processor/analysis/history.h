// What happened to a page, as changes ("created by mmap", "region split by
// munmap", "moved here by mremap from ...", "unmapped by munmap"), oldest first.
//
// madvise calls enter as "released" (MADV_DONTNEED, FREE, REMOVE: contents
// dropped) or "advised" entries at their time, naming the version of the page
// then.
//
//   PageLineage(idx, p, addr, at)  the page that is at addr at time `at` (or
//       was last, if nothing is there then): its own versions only, followed
//       back through splits, moves and forks to where it was created.
//       This is `pageblame query --history`.
//   PageHistory(idx, p, addr)      every change ever made at addr in process
//       p, whichever page was there (earlier tenants too), plus where the
//       first one came from. This is what touched the address: the perf
//       script plugin keeps these calls' events.
#ifndef PAGEBLAME_ANALYSIS_HISTORY_H_
#define PAGEBLAME_ANALYSIS_HISTORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "processor/index/trace_index.h"

namespace pageblame::analysis {

// What one history entry says happened to the page.
enum class PageChange : uint8_t {
  // A version began (index::Begin):
  kCreated, kBeforeTrace, kSplit, kMovedIn, kForked, kCommitted, kDecommitted, kProtected,
  // The page went away (index::End):
  kUnmapped, kReplaced, kMovedOut, kExec, kChanged,
  // A madvise call, no new version: contents dropped, or other advice.
  kReleased, kAdvised,
};

// The word for a change in text and JSON ("created", "moved_in", "released"...).
const char* PageChangeName(PageChange c);

struct HistoryEntry {
  uint64_t time = 0;
  PageChange change = PageChange::kCreated;
  VersionId version;    // the version that began or ended
  EventId event;        // the call behind the change (invalid for fork/exec/before_trace)
};

std::vector<HistoryEntry> PageHistory(const index::TraceIndex& idx, uint32_t process, uint64_t addr);
std::vector<HistoryEntry> PageLineage(const index::TraceIndex& idx, uint32_t process, uint64_t addr,
                                      uint64_t at);

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_HISTORY_H_

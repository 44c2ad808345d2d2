// The rows of `pageblame maps` text: runs of region versions that the
// kernel would show as one VMA (adjacent, the same prot, and one kind of
// memory: one file at contiguous offsets, the heap, or anonymous memory
// made by one call stack, or all from before the trace), each with what it
// mostly is and the calls behind it.
//
//   std::vector<RegionRun> runs = RegionRuns(idx, regions, /*split=*/false);
//   runs[0].origin.top;   // the creating call that made the most of its bytes
//
// With `split`, every version is a run of its own.
#ifndef PAGEBLAME_ANALYSIS_REGION_RUNS_H_
#define PAGEBLAME_ANALYSIS_REGION_RUNS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "processor/analysis/heap_split.h"
#include "processor/analysis/region_kind.h"
#include "processor/index/trace_index.h"

namespace pageblame::analysis {

// A region of an address space at a moment (maps_answer.h).
struct MapsRegion {
  VersionId version;
  RegionKind kind = RegionKind::kAnon;
  std::optional<uint64_t> rss;  // resident bytes; nullopt: no snapshot read them
  // Malloc arena kinds: bytes in use and free at the heap snapshot
  // (heap_split.h); nullopt: none.
  std::optional<HeapUse> heap;
};

// The creating (or committing) calls behind a run's bytes.
struct RunCalls {
  EventId top;        // the call that made the most bytes (ties: the lower id); invalid: none
  size_t calls = 0;   // distinct calls
  size_t stacks = 0;  // distinct stacks of those calls
};

struct RegionRun {
  size_t first = 0, count = 0;      // regions[first, first + count)
  uint64_t start = 0, end = 0;
  std::optional<RegionKind> kind;   // KindTally::Dominant of its regions
  std::optional<uint64_t> rss;      // the sum of what snapshots read (AddRss)
  RunCalls origin, commit;
};

// `regions`: one process's, sorted by start.
std::vector<RegionRun> RegionRuns(const index::TraceIndex& idx, const std::vector<MapsRegion>& regions, bool split);

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_REGION_RUNS_H_

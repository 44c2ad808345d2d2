// The report's address strip (render/report_data.h): the regions of one
// process at one moment, each with its kind, label, resident bytes, malloc
// arena bytes in use and free (heap_split.h) and the history of its first page; past `max_regions` regions, runs of alike
// neighbours as one element, so that a churning process's ten thousand
// regions do not make a page of many MB.
//
//   std::vector<VersionId> alive = idx.RegionsAt(p, at);
//   std::vector<StripRun> strip = AddressStrip(idx, p, at, alive, snapshot, heap, kinds.Function(), 2000);
//
// Alike neighbours: adjacent, made by one creating stack (or both before
// the trace), with the same prot, label (RegionLabel) and kind. Not the
// commit stack: a churning heap's pages are each committed by their own
// call, and the run would be the region again. Every alive version is in
// exactly one run, in order: runs' `count`s add up to alive.size() and
// their bytes to its mapped bytes.
#ifndef PAGEBLAME_ANALYSIS_ADDRESS_STRIP_H_
#define PAGEBLAME_ANALYSIS_ADDRESS_STRIP_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "processor/analysis/heap_split.h"
#include "processor/analysis/history.h"
#include "processor/analysis/region_kind.h"
#include "processor/index/trace_index.h"
#include "processor/residency/residency_index.h"

namespace pageblame::analysis {

struct StripRun {
  size_t first = 0;    // alive[first, first + count)
  uint32_t count = 0;  // > 1 only past max_regions
  uint64_t end = 0;    // the last version's end (the first's start begins the run)
  uint64_t bytes = 0;
  RegionKind kind = RegionKind::kAnon;
  std::string prot, label;      // RegionProt, RegionLabel of its versions
  std::optional<uint64_t> rss;  // resident bytes (AddRss of the versions'); nullopt: no snapshot read them
  // Of a malloc arena kind: its bytes in use and free at the heap snapshot
  // (HeapView::Split of each version, added); nullopt: no heap snapshot.
  std::optional<HeapUse> heap;
  // The first version's first page: its PageLineage up to `at` (the
  // others' differ only in the calls that made them, which the run shares
  // by its stack).
  std::vector<HistoryEntry> lineage;
};

// `alive`: RegionsAt(p, at); `snapshot`, `heap`: the residency and heap
// snapshots for (p, at) (ResidentView, HeapView::SnapshotFor), or null.
std::vector<StripRun> AddressStrip(const index::TraceIndex& idx, uint32_t p, uint64_t at,
                                   const std::vector<VersionId>& alive,
                                   const residency::ResidencySnapshot* snapshot, const heap::HeapSnapshot* heap,
                                   const KindFunction& kind_of, size_t max_regions);

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_ADDRESS_STRIP_H_

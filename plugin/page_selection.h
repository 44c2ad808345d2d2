// What the plugin asks the index: the requested pages/regions, the calls of
// their histories (the samples to keep), and the addresses to answer for.
//
//   PageSelection sel(trace.index(), selection.processes);   // session::Resolve
//   KeepSet keep;
//   for (const Target& t : sel.Targets(options)) sel.AddHistoryCalls(t, &keep);
//   keep.Finalize();
//
// A page's history is analysis::PageHistory (so a page that moved or forked
// includes its earlier life). Its calls are kept except "split" changes: a
// split means a call removed a neighbouring part of the region, so its range
// does not touch the page (perf script shows only the calls whose range
// touches the pages). For a region, every page counts: the region is cut at
// every version boundary the index has there (translated through moves and
// forks), and one page per piece stands for the piece, so each call is found
// without walking the region page by page.
#ifndef PAGEBLAME_PLUGIN_PAGE_SELECTION_H_
#define PAGEBLAME_PLUGIN_PAGE_SELECTION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"

#include "plugin/dlfilter_options.h"
#include "plugin/keep_set.h"
#include "processor/index/trace_index.h"

namespace pageblame::plugin {

inline constexpr uint64_t kPageSize = 4096;

// One requested page or region, and the addresses the summary answers for.
struct Target {
  uint64_t start = 0;  // the 4 KiB page containing the address, or the region
  uint64_t end = 0;
  bool is_region = false;
  std::string source;  // regions: "FILE:LINE"
  // Pages: the address as given. Regions: the start of each piece that one
  // version covers at the end of the trace (in any selected process), so
  // `pageblame query` on these addresses gives the same answers.
  std::vector<uint64_t> addresses;
};

class PageSelection {
 public:
  PageSelection(const index::TraceIndex& idx, std::vector<uint32_t> processes);

  std::vector<Target> Targets(const DlfilterOptions& options) const;
  // Adds the calls of the histories of every page of `t` in the selected
  // processes (and the creating calls of their versions).
  void AddHistoryCalls(const Target& t, KeepSet* keep) const;
  // The calls of the history of the page at `addr` in process `p` that the
  // plugin keeps (see above), oldest first, without duplicates.
  std::vector<EventId> HistoryCalls(uint32_t p, uint64_t addr) const;

  const std::vector<uint32_t>& processes() const { return processes_; }

 private:
  struct Entry {
    uint64_t start;
    uint64_t end;
    VersionId id;
  };
  // Addresses in [a, b) where the versions of process `p` that ever covered
  // part of it start or end, plus `a`; through moves/forks up to `depth`.
  // `visited` holds the versions already followed back through a move or
  // fork: each is followed once, so the work is bounded by the number of
  // versions (without it, regions moved back and forth between the same
  // slots made the walk exponential).
  void Boundaries(uint32_t p, uint64_t a, uint64_t b, absl::flat_hash_set<uint32_t>* visited,
                  std::vector<uint64_t>* out) const;
  std::vector<uint64_t> LivePieces(uint64_t a, uint64_t b) const;

  const index::TraceIndex& idx_;
  std::vector<uint32_t> processes_;
  // Per process: every version by start, with the running maximum of `end`
  // so an overlap scan can stop early.
  std::vector<std::vector<Entry>> by_process_;
  std::vector<std::vector<uint64_t>> max_end_;
};

}  // namespace pageblame::plugin

#endif  // PAGEBLAME_PLUGIN_PAGE_SELECTION_H_

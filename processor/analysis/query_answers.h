// The answers of `pageblame query`, as data: for each address, every
// process that had it mapped at the chosen time and the region version there,
// or the page's last tenant when nobody had it, with the page's lineage.
// render/query_report.h prints them.
//
//   QueryOptions o;  o.addresses = {0x78e8c18e7000};  o.processes = ...;
//   std::vector<QueryAnswer> answers = Query(idx, o);
#ifndef PAGEBLAME_ANALYSIS_QUERY_ANSWERS_H_
#define PAGEBLAME_ANALYSIS_QUERY_ANSWERS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "processor/analysis/heap_split.h"
#include "processor/analysis/history.h"
#include "processor/analysis/scope.h"
#include "processor/index/trace_index.h"
#include "processor/residency/residency_index.h"

namespace pageblame::analysis {

// Scope: `pid` (one pid was asked about) and the `processes` it names, at
// `at`; whether the page was in RAM, and the region's resident bytes; with
// kind_of, the region's kind and, inside malloc's arenas, what of the page
// and the region is in use or free (`heap`). `kinds` filters nothing.
struct QueryOptions : Scope {
  std::vector<uint64_t> addresses;
  bool history = false;  // text: print the page's history (JSON always has it)
};

// One (address, process) answer of a query; `version` is invalid if the page
// is not mapped there at the time asked (then `process` is its last tenant,
// or, with one pid asked about, that pid's newest process, or none).
struct QueryAnswer {
  uint64_t address = 0;
  std::optional<uint32_t> process;
  VersionId version;
  // Filled by Query() only. The page's lineage in `process` up to the time
  // asked (PageLineage; empty without a process), which the answers print
  // as its history and, for a page gone by then, how it went.
  std::vector<HistoryEntry> lineage;
  // For an answer with a process and no version: UnknownBreakCall.
  EventId unknown_break;
  // Filled by Query() only, for an answer with a process: the residency
  // snapshot that speaks for it at the time asked (ResidentView::SnapshotFor;
  // null: none, or no options.rss), the page's state in it ("resident",
  // "swapped", "not resident"; nullopt: not read) and the resident bytes of
  // `version`'s range (nullopt: no version, or not read).
  const residency::ResidencySnapshot* snapshot = nullptr;
  std::optional<std::string> page_state;
  std::optional<uint64_t> region_rss;
  // Filled by Query() only, when options.kind_of is set: the version's kind;
  // for kinds of malloc's arenas (ArenaKind), the heap snapshot at the time
  // asked (null: none) and the split of the queried page and of the region
  // into bytes in use and free held by glibc (heap_split.h; nullopt: no
  // snapshot).
  std::optional<RegionKind> kind;
  const heap::HeapSnapshot* heap_snapshot = nullptr;
  std::optional<HeapUse> page_heap, region_heap;
};
// Each address in every process of `procs` that had it mapped at `at`; if
// none, its last tenant(s) among them (history says how the page went), or
// one answer without a process (`one_pid`: for the newest of `procs`).
std::vector<QueryAnswer> QueryAnswers(const index::TraceIndex& idx, const std::vector<uint32_t>& procs,
                                      const std::vector<uint64_t>& addresses, uint64_t at, bool one_pid);
// QueryAnswers for the options' addresses, processes and time, each with
// its lineage, unknown_break and residency: everything QueryJson and
// QueryText print.
std::vector<QueryAnswer> Query(const index::TraceIndex& idx, const QueryOptions& options);

// Attach mode without -d: the brk call whose new break lies above `addr`
// in process p's heap, having moved it from a value the trace never saw, so
// that a heap page at addr with no known version may have been made by that
// call or may predate the trace; invalid when that cannot be so.
EventId UnknownBreakCall(const index::TraceIndex& idx, uint32_t p, uint64_t addr);

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_QUERY_ANSWERS_H_

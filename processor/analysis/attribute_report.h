// `pageblame attribute`: for each region of a list (a diff result, a pmap or
// /proc maps table, a WinDbg !address table), which creating calls made its
// bytes, as the trace saw one process at one time.
//
//   AttributeOptions o;             // o.pid = 6640; o.at = index::kEndOfTrace;
//   ASSIGN_OR_RETURN(Attribution a, Attribute(trace.index(), table.regions, o));
//   for (const RegionAttribution& r : a.regions) {
//     // r.created_bytes() + r.before_trace_bytes + r.unmapped_bytes == r.region.size()
//   }
//   a.stacks[0];                    // the unique call stack that made the most bytes
//
// Each byte of a region goes to exactly one of:
//   - the creating call (Version::origin) of the version of the process that
//     is alive at `at` and covers it, or with CreditBy::kCommit its
//     committing call (Version::commit) if it has one;
//   - before_trace: covered by an alive version with no such call;
//   - unmapped: no alive version covers it (the trace says nothing was mapped
//     there at `at`, or, for pages the trace never saw at all, does not know:
//     see RegionAttribution::never_seen_bytes).
// The versions of one process alive at one time never overlap (they are its
// address space at that time), so the split is exact; Attribute() checks the
// sum for every region and fails with an internal error if it is ever off.
//
// Resident bytes from the table (pmap -X/-XX, smaps: Region::rss) pass
// through: each region keeps its rss, and when some region has one, each
// stack gets StackTotal::table_rss and the total Attribution::table_rss. The
// table says how much of a region is resident, not where, so a stack that
// made only part of a region gets bounds for it, never a proportion.
//
// Regions are attributed independently and kept in the given order; if they
// overlap, the shared bytes count in each (the per-stack totals add region
// bytes), so callers merge overlapping rows first (regions::RegionMerger, as
// `attribute --regions` does). Sums are checked: regions whose sizes add up
// to more than 2^64 - 1 bytes (only overlapping ones can) are an OutOfRange
// error, never a wrapped total. Cost: one RegionsAt() per candidate process,
// O(log n + k) per region.
#ifndef PAGEBLAME_ANALYSIS_ATTRIBUTE_REPORT_H_
#define PAGEBLAME_ANALYSIS_ATTRIBUTE_REPORT_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "processor/analysis/heap_split.h"
#include "processor/analysis/kind_tally.h"
#include "processor/analysis/rank_by.h"
#include "processor/analysis/region_kind.h"
#include "processor/analysis/scope.h"
#include "processor/index/trace_index.h"
#include "processor/regions/region.h"
#include "processor/regions/resident_bytes.h"
#include "processor/residency/residency_index.h"

namespace pageblame::analysis {

// Which call a page's bytes are credited to: the one that created it
// (Version::origin), or the one that committed it (Version::commit), falling
// back to the creating call for pages accessible since their creation.
enum class CreditBy { kCreate, kCommit };

// Scope: `pid` is the process. Without it: the only process of the trace,
// else the only one that had any of the regions' bytes mapped at `at`, else
// an error that lists the candidates (an empty region list needs no choice:
// the first process). With several entries for the pid (pid reuse), the one
// with bytes mapped, preferring the one alive at `at`, then the newest.
// Resident bytes per call, region and stack; regions of other `kinds` are
// left out of every total.
struct AttributeOptions : Scope {
  CreditBy by = CreditBy::kCreate;
  RankBy rank_by = RankBy::kCommitted;  // the order of Attribution::stacks
};

// The call that `by` credits a version's bytes to; invalid: before the trace.
inline EventId CreditedCall(const index::Version& v, CreditBy by) {
  return by == CreditBy::kCommit && v.commit.valid() ? v.commit : v.origin;
}

// Bytes of one region credited to one call (creating, or committing with
// CreditBy::kCommit).
struct CallBytes {
  EventId call;
  uint64_t bytes = 0;
  uint64_t committed = 0;  // of which accessible (prot other than PROT_NONE)
  std::optional<uint64_t> rss;  // of which resident; unknown if no snapshot read it
  KindTally kinds;         // its bytes by kind (with AttributeOptions::kind_of)
  // Its malloc arena bytes in use and free at the heap snapshot
  // (heap_split.h); unknown without one.
  std::optional<HeapUse> heap;
};

struct RegionAttribution {
  regions::Region region;
  std::vector<CallBytes> calls;  // bytes descending, then call time, then event id
  uint64_t before_trace_bytes = 0;
  uint64_t before_trace_committed = 0;  // of which accessible
  uint64_t unmapped_bytes = 0;
  // The part of unmapped_bytes that no version of the process covered at any
  // time up to `at`: the trace never saw these pages, so they may also have
  // been made by the kernel at exec or (attach mode) before the trace.
  uint64_t never_seen_bytes = 0;
  // Resident bytes of its mapped parts (calls' and before the trace's);
  // unknown if no snapshot read any of them.
  std::optional<uint64_t> rss;
  std::optional<HeapUse> heap;  // its calls' arena bytes in use and free (CallBytes::heap)
  // What the region is: the kind most of its mapped bytes are (KindTally),
  // "gc heap" where the region table's usage says so (TableSaysGcHeap);
  // none without AttributeOptions::kind_of or when nothing is mapped.
  std::optional<RegionKind> kind;

  uint64_t created_bytes() const;
};

// One unique call stack (StackId) over all regions.
struct StackTotal {
  StackId stack;
  EventId first_call;  // its earliest credited call: the stack's representative
  uint64_t bytes = 0;
  uint64_t committed = 0;  // of which accessible (prot other than PROT_NONE)
  uint32_t regions = 0;  // regions it made bytes of
  uint32_t calls = 0;    // distinct credited calls with this stack
  std::optional<uint64_t> rss;  // resident, where a snapshot read it
  std::optional<HeapUse> heap;  // arena bytes in use and free (CallBytes::heap)
  KindTally kinds;       // its bytes by kind
  std::optional<RegionKind> kind() const { return kinds.Dominant(); }
  // The table's resident bytes (Region::rss) in what this stack made, when
  // some region has rss: exact for regions with rss it made whole, bounds
  // for those it made in part and for its bytes in regions without rss (a
  // diff piece that is part of a row: 0 to its bytes). ResidentBytes counts
  // regions as rows. Unset when no region has rss.
  std::optional<regions::ResidentBytes> table_rss;
};

struct Attribution {
  uint32_t process = 0;  // index::TraceIndex process entry
  uint64_t at = index::kEndOfTrace;
  CreditBy by = CreditBy::kCreate;
  std::vector<RegionAttribution> regions;  // in the order given (of the kinds asked for)
  std::vector<RegionKind> kinds;           // AttributeOptions::kinds
  size_t regions_left_out = 0;             // regions of other kinds
  // By AttributeOptions::rank_by descending (committed by default: what the
  // process can touch ranks first, PROT_NONE reservations last; resident:
  // unknown counts 0), then committed, then bytes, then first call time,
  // then stack id.
  std::vector<StackTotal> stacks;
  RankBy rank_by = RankBy::kCommitted;
  uint64_t bytes = 0;  // sum of region sizes
  uint64_t created_bytes = 0;
  uint64_t committed_bytes = 0;  // of created_bytes, accessible
  uint64_t before_trace_bytes = 0;
  uint64_t before_trace_committed = 0;
  uint64_t unmapped_bytes = 0;
  std::optional<uint64_t> rss;  // resident bytes of all regions, where known
  // The snapshot the resident bytes are from; null: none (rss unknown).
  const residency::ResidencySnapshot* snapshot = nullptr;
  // The heap snapshot the in-use and free split is from; null: none.
  const heap::HeapSnapshot* heap_snapshot = nullptr;
  std::optional<HeapUse> heap;  // of all regions' calls
  // The regions' table rss, counted as StackTotal::table_rss counts it (each
  // region whole); unset when no region has rss.
  std::optional<regions::ResidentBytes> table_rss;
};

absl::StatusOr<Attribution> Attribute(const index::TraceIndex& idx,
                                      absl::Span<const regions::Region> regions,
                                      const AttributeOptions& options);

// The process entry Attribute() uses (see AttributeOptions::pid). When it
// cannot choose (no process, none or several had the bytes) the error is a
// usage error (base/usage_error.h) naming the candidates: say --pid.
absl::StatusOr<uint32_t> ChooseProcess(const index::TraceIndex& idx,
                                       absl::Span<const regions::Region> regions,
                                       const AttributeOptions& options);

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_ATTRIBUTE_REPORT_H_

// `pageblame growth`: what the address space gained and lost between two
// moments, per call stack — the difference a leak hunt asks about (JVM NMT's
// summary.diff, heaptrack_print -d, jeprof --base), from one recording.
//
//   GrowthOptions o;  o.processes = session::ProcessesOf(idx, pid);
//   o.from = t1;  o.to = t2;                  // ns; index::kEndOfTrace = the end
//   ASSIGN_OR_RETURN(Growth g, ComputeGrowth(idx, o));
//   g.stacks[0];      // the stack that grew the most
//   // sum(stacks.from) + before_trace.from == total.from  (and at `to`)
//
// Each byte mapped at `from` or at `to` in one of the processes is credited,
// as `attribute` credits it (CreditedCall), to a call: the one that created
// the version holding it, or with CreditBy::kCommit the one that committed
// it. Bytes of versions with no such call are `before_trace`. The totals are
// exactly `maps --at from` and `maps --at to` summed over the processes
// (the same versions: RegionsAt).
//
// Per stack, beside the bytes at both ends, where the difference comes from,
// judged call by call (and process by process: a fork child's copy is its
// own): of a call's bytes at `from` and at `to`, the smaller part is kept;
//   added   = bytes at `to` beyond that (made in between, or copied by a
//             fork, or credited back to it by a decommit);
//   removed = bytes at `from` beyond that (unmapped, or now credited to
//             another call: committed by it, or replaced);
//   made_gone = bytes its calls made between `from` and `to` that were gone
//             again at `to` (churn: invisible in the net growth).
// so to - from == added - removed for every stack. Cost: O(v) over all
// versions (for made_gone) plus two RegionsAt() per process.
#ifndef PAGEBLAME_ANALYSIS_GROWTH_REPORT_H_
#define PAGEBLAME_ANALYSIS_GROWTH_REPORT_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "processor/analysis/attribute_report.h"
#include "processor/analysis/growth_stacks.h"
#include "processor/analysis/heap_split.h"
#include "processor/analysis/kind_tally.h"
#include "processor/analysis/rank_by.h"
#include "processor/analysis/region_kind.h"
#include "processor/analysis/scope.h"
#include "processor/index/trace_index.h"
#include "processor/residency/residency_index.h"

namespace pageblame::analysis {

// Scope: the `processes` summed; resident bytes at both ends, each from the
// latest snapshot at or before it; only versions of `kinds` count, at both
// ends and in between, as if the others were not there. Not `at`: growth
// has two moments of its own.
struct GrowthOptions : Scope {
  uint64_t from = 0;                // ns, inclusive: the state after every event at or before it
  uint64_t to = index::kEndOfTrace;
  CreditBy by = CreditBy::kCreate;
  RankBy rank_by = RankBy::kCommitted;  // the order of Growth::stacks
};

struct Growth {
  std::vector<uint32_t> processes;
  uint64_t from = 0;
  uint64_t to = index::kEndOfTrace;
  CreditBy by = CreditBy::kCreate;
  RankBy rank_by = RankBy::kCommitted;
  BytesAt total_from, total_to;
  BytesAt before_from, before_to;  // bytes with no credited call (before the trace)
  std::vector<RegionKind> kinds;   // GrowthOptions::kinds
  // GrowthOptions::rss has snapshots; then the process entries with bytes
  // at `from` / at `to` but no snapshot of them at or before it: every sum
  // with their bytes (the totals, before_trace, their stacks) has rss
  // unknown, never a sum that counts them 0.
  bool snapshots = false;
  std::vector<uint32_t> no_snapshot_from, no_snapshot_to;
  // GrowthOptions::heap has heap snapshots (the same rule for BytesAt::heap).
  bool heap_snapshots = false;
  // By GrowthOptions::rank_by descending (committed growth by default: what
  // the process can touch ranks first, PROT_NONE reservations do not;
  // resident: an unknown end counts 0), then committed growth, then growth, then bytes at `to`
  // descending, then made_gone descending, then first call time, then
  // stack id. Stacks with bytes at either end or churn in between; none
  // with nothing at all. (Read-only rows: those that only churned are
  // kept in 16 B, growth_stacks.h.)
  GrowthStacks stacks;
};

// Fails (InvalidArgument) if from > to, and (Internal) if the stack totals
// ever differ from the totals.
absl::StatusOr<Growth> ComputeGrowth(const index::TraceIndex& idx, const GrowthOptions& options);

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_GROWTH_REPORT_H_

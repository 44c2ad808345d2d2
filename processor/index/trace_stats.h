// Data-quality counters of one load. Problems in the trace are counted here
// and reported, not fatal (Perfetto's stats table does the same).
#ifndef PAGEBLAME_INDEX_TRACE_STATS_H_
#define PAGEBLAME_INDEX_TRACE_STATS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace pageblame::index {

// A PERF_RECORD_LOST / LOST_SAMPLES: `count` records were dropped by the
// kernel somewhere in (t_from, t_to]: between the previous record we saw and
// this one. Replay results for pages changed in that span may be incomplete.
struct LostSpan {
  uint64_t t_from = 0;
  uint64_t t_to = 0;
  uint64_t count = 0;
  bool samples = false;  // LOST_SAMPLES (vs ring-buffer LOST records)
};

// Samples or records that could not be parsed, one run of them in the file:
// `samples` + `records` of them, between the parsed records stamped t_from
// and t_to around them in the file (0: from the trace's start, to its end;
// file order is time order only roughly, per CPU, as for lost spans).
// Replay results for pages changed in that span may be incomplete.
struct UnparsedSpan {
  uint64_t t_from = 0;
  uint64_t t_to = 0;
  uint64_t samples = 0;
  uint64_t records = 0;
};

struct TraceStats {
  uint64_t records = 0;
  uint64_t samples = 0;
  uint64_t memory_samples = 0;      // enter/exit samples of replayed syscalls
  uint64_t skipped_samples = 0;     // samples of events replay does not use, not parsed
  uint64_t other_syscall_samples = 0;  // raw_syscalls samples of other syscalls (read, then left)
  uint64_t calls = 0;               // paired enter+exit
  uint64_t calls_failed = 0;        // exit said -errno (or brk unchanged): nothing changed
  uint64_t calls_no_change = 0;     // succeeded but changed nothing (munmap of nothing, ...)
  uint64_t unmatched_exits = 0;     // exit without an enter on that thread
  uint64_t unmatched_enters = 0;    // enter replaced by another enter before its exit
  uint64_t pending_at_end = 0;      // enters still waiting for an exit at the end
  uint64_t unknown_records = 0;     // record types we skip
  // Samples of an unknown id, too short for their fields, or whose payload
  // is too short for their event's format.
  uint64_t bad_samples = 0;
  uint64_t bad_records = 0;         // COMM/FORK/EXIT/MMAP/LOST records that could not be parsed
  std::vector<UnparsedSpan> unparsed;  // where the bad samples and records were
  std::string first_unparsed;       // why the first of them failed, with its offset
  // Calls that "succeeded" with values the kernel cannot have produced, and
  // mapping records that wrap (replay/call_check.h): a damaged trace. Not
  // replayed; the first's reason and the times of the first and the last.
  uint64_t impossible_calls = 0;
  std::string first_impossible;
  uint64_t impossible_from = 0, impossible_to = 0;
  uint64_t out_of_order = 0;        // events older than what was already replayed
  bool time_order_by_rounds = false;  // ordered by perf's round rule, not by CPU lanes
  // Recorded with -d (attr.mmap_data): at attach perf reported every mapping
  // that was readable or executable, so one the trace never saw was neither.
  bool data_mappings = false;
  uint64_t unmaps_reordered = 0;    // munmap pieces another thread had already reused
  uint64_t calls_32bit = 0;         // calls of 32-bit processes, not replayed
  uint64_t mmap_records = 0;        // MMAP/MMAP2 sideband records
  uint64_t comm_records = 0;
  uint64_t fork_records = 0;
  uint64_t exit_records = 0;
  uint64_t lost_records = 0;        // total records lost (sum of LostSpan::count)
  std::vector<LostSpan> lost;
  uint64_t first_time = 0;
  uint64_t last_time = 0;
  // A recording whose index was thinned to stay within record --max-size
  // (IndexCodec::EncodeThinned): the versions that ended at or before
  // `thinned_before` and the calls only they named are gone, so the state
  // at any moment from it on is whole and before it is not kept (0: never
  // thinned). Counts of what went.
  uint64_t thinned_before = 0;
  uint64_t thinned_calls = 0;
  uint64_t thinned_versions = 0;
};

}  // namespace pageblame::index

#endif  // PAGEBLAME_INDEX_TRACE_STATS_H_

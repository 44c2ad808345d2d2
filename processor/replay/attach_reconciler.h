// AttachReconciler: applies the kernel's tables of mappings read at the
// attach (attach_maps.h, TRACE.attach-maps) to the replay, each at the
// moment its reading began: the process's address space becomes exactly
// the table there, and the events after it go on from that state.
//
// The table is the truth at its moment: calls that ended before it are in
// it (the exit tracepoint fires once the change is made), calls that end
// after it are replayed after it, on top (a page the table already shows
// them making is made again: the same pages, now with their origin). So:
//   - pages of the table the replay does not have (PROT_NONE reservations
//     perf does not report, what changed while perf started) are added as
//     pages from before the trace;
//   - pages from before the trace that the table shows with another prot
//     are replaced by the table's;
//   - pages the replay has that the table does not (unmapped while perf
//     started) end there (unmapped, by no call).
// Pages a call of the trace made that the table shows with another prot
// can only differ if perf lost events: they are left as the trace says and
// counted (mismatched_pages).
//
//   AttachReconciler r(maps, &index.strings());       // on the loader's thread
//   replay: if (time >= r.next_time()) r.ApplyDue(time, &procs, &index);
//   at the end: r.ApplyDue(index::kEndOfTrace, &procs, &index);
#ifndef PAGEBLAME_REPLAY_ATTACH_RECONCILER_H_
#define PAGEBLAME_REPLAY_ATTACH_RECONCILER_H_

#include <cstdint>
#include <vector>

#include "processor/index/trace_index.h"
#include "processor/replay/attach_maps.h"
#include "processor/replay/process_table.h"

namespace pageblame::replay {

class AttachReconciler {
 public:
  // Interns the tables' paths into `strings` (the replay thread interns
  // nothing: the loader's thread does, meanwhile).
  AttachReconciler(const AttachMaps& maps, index::StringTable* strings);

  // When the next table is due (index::kEndOfTrace: none is left).
  uint64_t next_time() const;
  // When the last table is due (0: there is none).
  uint64_t last_time() const { return tables_.empty() ? 0 : tables_.back().time; }
  // Applies every table due at or before `t`, in time order.
  void ApplyDue(uint64_t t, ProcessTable* procs, index::TraceIndex* idx);

  uint64_t added_pages() const { return added_pages_; }
  uint64_t removed_pages() const { return removed_pages_; }
  uint64_t mismatched_pages() const { return mismatched_pages_; }

 private:
  struct Row {
    uint64_t start, end;
    index::RegionAttrs attrs;
  };
  struct Table {
    uint32_t pid;
    uint64_t time;
    std::vector<Row> rows;
    bool heap = false;  // a [heap] row: the program break is its end
    uint64_t heap_end = 0;
  };
  void Apply(const Table& t, ProcessTable* procs, index::TraceIndex* idx);
  // Ends the live pages of process `p` that no row covers.
  void RemoveUncovered(const Table& t, uint32_t p, index::TraceIndex* idx);

  std::vector<Table> tables_;  // by time
  size_t next_ = 0;
  uint64_t added_pages_ = 0, removed_pages_ = 0, mismatched_pages_ = 0;
};

}  // namespace pageblame::replay

#endif  // PAGEBLAME_REPLAY_ATTACH_RECONCILER_H_

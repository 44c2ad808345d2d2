#include "processor/replay/attach_reconciler.h"

#include <sys/mman.h>

#include <algorithm>
#include <utility>

#include "processor/replay/address_space.h"
#include "processor/replay/call_rules.h"

namespace pageblame::replay {

using index::Begin;
using index::End;
using index::RegionAttrs;

namespace {

// Pages from before the trace that no call of it touched (as
// AddressSpace::AddBeforeTrace's replace_unseen judges them).
bool Unseen(const index::Version& v) {
  return (v.begin == Begin::kBeforeTrace || v.begin == Begin::kSplit) && !v.begin_event.valid() &&
         !v.origin.valid();
}

}  // namespace

AttachReconciler::AttachReconciler(const AttachMaps& maps, index::StringTable* strings) {
  for (const AttachMaps::Table& t : maps.tables()) {
    Table table{t.pid, t.from, {}};
    for (const AttachMaps::Row& r : t.rows) {
      RegionAttrs attrs;
      attrs.prot = r.prot;
      attrs.flags = r.shared ? MAP_SHARED : MAP_PRIVATE;
      if (r.path.empty()) attrs.flags |= MAP_ANONYMOUS;
      attrs.pgoff = r.path.empty() ? 0 : r.pgoff;
      if (!r.path.empty()) attrs.path = strings->Intern(r.path);
      table.rows.push_back(Row{r.start, r.end, attrs});
      if (r.path == "[heap]") {
        table.heap = true;
        table.heap_end = r.end;
      }
    }
    tables_.push_back(std::move(table));
  }
  std::stable_sort(tables_.begin(), tables_.end(), [](const Table& a, const Table& b) { return a.time < b.time; });
}

uint64_t AttachReconciler::next_time() const {
  return next_ < tables_.size() ? tables_[next_].time : index::kEndOfTrace;
}

void AttachReconciler::ApplyDue(uint64_t t, ProcessTable* procs, index::TraceIndex* idx) {
  while (next_ < tables_.size() && tables_[next_].time <= t) Apply(tables_[next_++], procs, idx);
}

void AttachReconciler::RemoveUncovered(const Table& t, uint32_t p, index::TraceIndex* idx) {
  // [a, b) ranges of live pages outside every row, found first, ended after.
  std::vector<std::pair<uint64_t, uint64_t>> gone;
  auto row = t.rows.begin();
  for (const auto& [start, live] : idx->process(p).live) {
    uint64_t a = start;
    while (a < live.end) {
      while (row != t.rows.end() && row->end <= a) ++row;
      if (row == t.rows.end() || row->start >= live.end) {
        gone.emplace_back(a, live.end);
        break;
      }
      if (row->start > a) gone.emplace_back(a, row->start);
      a = row->end;
    }
  }
  AddressSpace as(idx, p);
  for (const auto& [a, b] : gone) {
    as.Remove(a, b, t.time, End::kUnmapped, EventId::Invalid());
    removed_pages_ += (b - a) / kPage;
  }
}

void AttachReconciler::Apply(const Table& t, ProcessTable* procs, index::TraceIndex* idx) {
  const std::optional<uint32_t> found = procs->Find(t.pid);
  if (!found) return;  // no record of it in the trace: nothing to correct
  const uint32_t p = *found;
  RemoveUncovered(t, p, idx);
  AddressSpace as(idx, p);
  for (const Row& r : t.rows) {
    for (const AddressSpace::Piece& piece : as.Peek(r.start, r.end)) {
      const index::Version& v = idx->version(piece.from);
      if (v.attrs.prot == r.attrs.prot) continue;
      if (!Unseen(v)) {
        mismatched_pages_ += (piece.end - piece.start) / kPage;
        continue;
      }
      as.Remove(piece.start, piece.end, t.time, End::kReplaced, EventId::Invalid());
    }
    const uint64_t before = idx->process(p).mapped.now();
    as.AddBeforeTrace(r.start, r.end, t.time, r.attrs);
    added_pages_ += (idx->process(p).mapped.now() - before) / kPage;
  }
  ProcessTable::ProcState& ps = procs->Proc(p);
  if (t.heap && !ps.brk_known) {
    ps.brk_known = true;
    ps.brk = t.heap_end;
  }
}

}  // namespace pageblame::replay

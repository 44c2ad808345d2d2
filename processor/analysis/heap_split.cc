#include "processor/analysis/heap_split.h"

#include <algorithm>

#include "processor/index/committed.h"
#include "processor/residency/residency_index.h"

namespace pageblame::analysis {

uint64_t FreeBytesIn(const heap::HeapSnapshot& s, uint64_t start, uint64_t end) {
  const std::vector<heap::FreeRange>& r = s.free_ranges;  // sorted, disjoint
  auto it = std::partition_point(r.begin(), r.end(), [&](const heap::FreeRange& f) { return f.end <= start; });
  uint64_t n = 0;
  for (; it != r.end() && it->start < end; ++it) n += std::min(it->end, end) - std::max(it->start, start);
  return n;
}

const heap::HeapSnapshot* HeapView::SnapshotFor(uint32_t process, uint64_t at) const {
  if (heap_ == nullptr) return nullptr;
  const index::Process& proc = idx_.process(process);
  // As ResidentView: the exit snapshot comes just before the exit record.
  uint64_t until = at;
  if (proc.t_exit != index::kEndOfTrace) until = std::min(at, proc.t_exit + residency::ResidencyIndex::kSlack);
  const heap::HeapSnapshot* s = heap_->At(proc.pid, until);
  // Taken before this entry began: of another program with the pid (the
  // command's pid walked before its exec: perf's own heap). Strictly, unlike
  // ResidentView's slack: a heap snapshot's free ranges are another heap's.
  if (s == nullptr || (!proc.existed_before_trace && *s->time < proc.t_start)) return nullptr;
  return s;
}

std::optional<HeapUse> HeapView::Split(const heap::HeapSnapshot* s, std::optional<RegionKind> kind,
                                       const index::Version& v, uint64_t start, uint64_t end) {
  if (s == nullptr) return std::nullopt;
  HeapUse u;
  if (!ArenaKind(kind) || !index::IsCommitted(v) || v.t_from > *s->time || end <= start) return u;
  u.free = FreeBytesIn(*s, start, end);
  u.in_use = (end - start) - u.free;
  return u;
}

}  // namespace pageblame::analysis

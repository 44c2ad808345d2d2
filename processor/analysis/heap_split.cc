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

const heap::HeapSnapshot* HeapView::SnapshotFor(uint32_t process, uint64_t at, const ResidentView& rss) const {
  const heap::HeapSnapshot* latest = SnapshotFor(process, at);
  const residency::ResidencySnapshot* r = rss.SnapshotFor(process, at);
  if (heap_ == nullptr || r == nullptr || (latest != nullptr && *latest->time >= r->time)) return latest;
  const std::vector<heap::HeapSnapshot>& walks = heap_->Of(r->pid);
  auto walk = std::partition_point(walks.begin(), walks.end(),
                                   [&](const heap::HeapSnapshot& h) { return *h.time < r->time; });
  const index::Process& proc = idx_.process(process);
  if (walk == walks.end() || (!proc.existed_before_trace && *walk->time < proc.t_start)) return latest;
  // Before the pid's next residency snapshot: the walk of r's moment, not
  // of a later one (that moment's walk was skipped, or failed).
  const std::vector<residency::ResidencySnapshot>& moments = rss.index()->Of(r->pid);
  auto next = std::partition_point(moments.begin(), moments.end(),
                                   [&](const residency::ResidencySnapshot& m) { return m.time <= r->time; });
  if (next != moments.end() && *walk->time >= next->time) return latest;
  return &*walk;
}

std::optional<HeapUse> HeapView::Split(const heap::HeapSnapshot* s, std::optional<RegionKind> kind,
                                       const index::Version& v, uint64_t start, uint64_t end) {
  if (s == nullptr) return std::nullopt;
  HeapUse u;
  if (!ArenaKind(kind) || !index::IsCommitted(v) || end <= start) return u;
  if (v.t_from > *s->time) return std::nullopt;
  u.free = FreeBytesIn(*s, start, end);
  u.in_use = (end - start) - u.free;
  return u;
}

}  // namespace pageblame::analysis

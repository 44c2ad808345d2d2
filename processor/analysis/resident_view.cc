#include "processor/analysis/resident_view.h"

#include <algorithm>

namespace pageblame::analysis {

const residency::ResidencySnapshot* ResidentView::SnapshotFor(uint32_t process, uint64_t at) const {
  if (rss_ == nullptr) return nullptr;
  const index::Process& proc = idx_.process(process);
  // The exit snapshot is taken at the exit stop, just before the process's
  // exit record: allow the recorder's slack after it.
  uint64_t until = at;
  if (proc.t_exit != index::kEndOfTrace) {
    until = std::min(at, proc.t_exit + residency::ResidencyIndex::kSlack);
  }
  const residency::ResidencySnapshot* s = rss_->At(proc.pid, until);
  // Taken before this entry began: of an earlier process with the pid (an
  // attached process's first record may come after the first snapshot).
  if (s == nullptr || (!proc.existed_before_trace && s->time + residency::ResidencyIndex::kSlack < proc.t_start)) {
    return nullptr;
  }
  return s;
}

std::optional<uint64_t> ResidentView::Bytes(const residency::ResidencySnapshot* s, uint64_t start, uint64_t end) {
  if (s == nullptr || s->read.BytesIn(start, end) == 0) return std::nullopt;
  return s->ResidentBytes(start, end);
}

std::optional<std::string> ResidentView::PageState(const residency::ResidencySnapshot* s, uint64_t addr) {
  if (s == nullptr || !s->read.Contains(addr)) return std::nullopt;
  if (s->present.Contains(addr)) return "resident";
  return s->swapped.Contains(addr) ? "swapped" : "not resident";
}

}  // namespace pageblame::analysis

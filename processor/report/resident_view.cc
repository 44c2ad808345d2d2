#include "processor/report/resident_view.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "processor/report/syscall_format.h"

namespace pageblame::report {

const residency::ResidencySnapshot* ResidentView::SnapshotFor(uint32_t process, uint64_t at) const {
  if (rss_ == nullptr) return nullptr;
  const index::Process& proc = idx_.process(process);
  // The exit snapshot is taken at the exit stop, just before the process's
  // exit record: allow the recorder's slack after it.
  uint64_t until = at;
  if (proc.t_exit != index::kLive) {
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

std::string ResidentView::Describe(const residency::ResidencySnapshot* s, uint64_t at) {
  if (s == nullptr) return "no residency snapshot of this process at or before this moment";
  std::string out = absl::StrCat("snapshot at ", FormatTime(s->time), ", ", residency::ReasonName(s->reason));
  if (at != index::kLive) {
    absl::StrAppend(&out, absl::StrFormat(", %.3f s before the moment asked", (at - s->time) / 1e9));
  }
  return out;
}

std::string HumanRss(std::optional<uint64_t> bytes) { return bytes ? HumanBytes(*bytes) : "?"; }

std::string JsonRss(std::optional<uint64_t> bytes) { return bytes ? absl::StrCat(*bytes) : "null"; }

}  // namespace pageblame::report

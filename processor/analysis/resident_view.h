// ResidentView: resident bytes of a trace's regions, from the residency
// snapshot (residency/) that speaks for a process entry at a moment.
//
//   ResidentView rss(residency_index_or_null, idx);
//   const ResidencySnapshot* s = rss.SnapshotFor(process, at);
//   std::optional<uint64_t> bytes = ResidentView::Bytes(s, v.start, v.end);
//
// The snapshot for (process, at) is the latest one of the process's pid
// taken at or before `at` (index::kEndOfTrace: the latest) while that process
// entry lived: a reused pid's snapshots are not mixed. Bytes are unknown
// (nullopt; rss_text.h prints it "null" in JSON, "?" in text), never 0, where there is no such
// snapshot or it read none of the range (PROT_NONE then, or mapped after
// it): a reservation's resident bytes are not read.
#ifndef PAGEBLAME_ANALYSIS_RESIDENT_VIEW_H_
#define PAGEBLAME_ANALYSIS_RESIDENT_VIEW_H_

#include <cstdint>
#include <optional>
#include <string>

#include "processor/index/trace_index.h"
#include "processor/residency/residency_index.h"

namespace pageblame::analysis {

class ResidentView {
 public:
  // `rss` may be null (a trace without snapshots): every answer is unknown.
  ResidentView(const residency::ResidencyIndex* rss, const index::TraceIndex& idx) : rss_(rss), idx_(idx) {}
  bool has_snapshots() const { return rss_ != nullptr && rss_->size() > 0; }
  const residency::ResidencyIndex* index() const { return rss_; }  // may be null
  const residency::ResidencySnapshot* SnapshotFor(uint32_t process, uint64_t at) const;
  static std::optional<uint64_t> Bytes(const residency::ResidencySnapshot* s, uint64_t start, uint64_t end);
  // The page at `addr` per the snapshot: "resident", "swapped" or "not
  // resident"; nullopt if the snapshot did not read it (or there is none).
  static std::optional<std::string> PageState(const residency::ResidencySnapshot* s, uint64_t addr);

 private:
  const residency::ResidencyIndex* rss_;
  const index::TraceIndex& idx_;
};

// Adds resident bytes to a sum: unknown + known is the known part (the sum
// counts what snapshots read), unknown + unknown stays unknown.
inline void AddRss(std::optional<uint64_t>* sum, std::optional<uint64_t> bytes) {
  if (bytes) *sum = sum->value_or(0) + *bytes;
}

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_RESIDENT_VIEW_H_

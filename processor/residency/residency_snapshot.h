// ResidencySnapshot: which pages of one process were in RAM (present) or in
// swap at one moment, read from /proc/PID/pagemap over the process's
// accessible mappings. PROT_NONE ranges (reservations, guard pages) are never
// read: they may be hundreds of GiB, and what no access reaches is not the
// memory a user measures. Pages outside `read` are unknown, not absent.
//
//   const ResidencySnapshot& s = ...;
//   uint64_t rss = s.ResidentBytes(region.start, region.end);
//   bool known = s.Covers(region.start, region.end);
//
// Page ranges are half-open byte ranges, page-aligned, sorted and disjoint.
// A page shared with other processes (file pages, copy-on-write pages after
// fork) is resident in each process that maps it, as /proc/PID/smaps' Rss
// counts it.
#ifndef PAGEBLAME_RESIDENCY_RESIDENCY_SNAPSHOT_H_
#define PAGEBLAME_RESIDENCY_RESIDENCY_SNAPSHOT_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/string_view.h"

namespace pageblame::residency {

// Why the recorder took a snapshot.
enum class SnapshotReason : uint32_t {
  kPeriodic = 0,   // every --rss-every seconds
  kRequested = 1,  // the user asked (SIGUSR1 to `pageblame record`)
  kStop = 2,       // the recording stopped (Ctrl-C, the end of an attach)
  kExit = 3,       // the process was exiting (its memory still whole)
};
inline constexpr uint32_t kMaxSnapshotReason = 3;
absl::string_view ReasonName(SnapshotReason r);

struct PageRange {
  uint64_t start = 0;
  uint64_t end = 0;  // exclusive
  uint64_t size() const { return end - start; }
  bool operator==(const PageRange& o) const { return start == o.start && end == o.end; }
};

// Appends [start, end) to sorted ranges `v` (start >= v's last end), joining
// it to the last range when they touch.
void AppendRange(std::vector<PageRange>* v, uint64_t start, uint64_t end);

// Sorted disjoint ranges with running byte totals, so the bytes of any
// address range are two binary searches away.
class RangeTally {
 public:
  // `ranges` sorted, disjoint, non-empty each (the file reader checks).
  explicit RangeTally(std::vector<PageRange> ranges = {});
  // Bytes of the ranges inside [start, end).
  uint64_t BytesIn(uint64_t start, uint64_t end) const;
  // True if `addr` lies in one of the ranges.
  bool Contains(uint64_t addr) const;
  uint64_t total() const { return before_.empty() ? 0 : before_.back() + ranges_.back().size(); }
  const std::vector<PageRange>& ranges() const { return ranges_; }

 private:
  // Bytes of [start, addr) of the ranges: the prefix total up to addr.
  uint64_t BytesBelow(uint64_t addr) const;
  std::vector<PageRange> ranges_;
  std::vector<uint64_t> before_;  // before_[i]: bytes of ranges_[0, i)
};

struct ResidencySnapshot {
  uint32_t pid = 0;
  // When the reading began and ended, in the trace's clock (ns; the recorder
  // runs perf with --clockid and reads the same clock).
  uint64_t time = 0;
  uint64_t end_time = 0;
  SnapshotReason reason = SnapshotReason::kPeriodic;
  // smaps_rollup's Rss and Swap when read with the snapshot (the check: the
  // present pages of the accessible mappings sum to Rss, unless PROT_NONE
  // ranges hold resident pages, or the process changed while it was read).
  std::optional<uint64_t> rollup_rss;
  std::optional<uint64_t> rollup_swap;
  RangeTally read;     // the ranges whose pagemap entries were read
  RangeTally present;  // pages in RAM
  RangeTally swapped;  // pages in swap

  // True if every page of [start, end) was read.
  bool Covers(uint64_t start, uint64_t end) const { return read.BytesIn(start, end) == end - start; }
  uint64_t ResidentBytes(uint64_t start, uint64_t end) const { return present.BytesIn(start, end); }
  uint64_t SwappedBytes(uint64_t start, uint64_t end) const { return swapped.BytesIn(start, end); }
};

}  // namespace pageblame::residency

#endif  // PAGEBLAME_RESIDENCY_RESIDENCY_SNAPSHOT_H_

// PagemapSampler: takes a ResidencySnapshot of a live process from
// /proc/PID/maps (which ranges are accessible), /proc/PID/pagemap (bit 63:
// present in RAM, bit 62: swapped) and /proc/PID/smaps_rollup (the kernel's
// Rss and Swap, kept to check the sum against). Needs the right to read the
// process's pagemap (root, or the same user with ptrace access); without
// CAP_SYS_ADMIN the kernel hides page frame numbers but not the two bits.
//
//   PagemapSampler sampler;
//   ASSIGN_OR_RETURN(ResidencySnapshot s, sampler.Take(pid, SnapshotReason::kPeriodic));
//
// The process runs on while it is read (no freeze): a page touched or
// released during the read may be counted either way; `time` and `end_time`
// bound when. Reads 64 Ki entries (512 KiB) of pagemap per pread.
#ifndef PAGEBLAME_RESIDENCY_PAGEMAP_SAMPLER_H_
#define PAGEBLAME_RESIDENCY_PAGEMAP_SAMPLER_H_

#include <cstdint>
#include <ctime>
#include <vector>

#include "absl/status/statusor.h"
#include "processor/residency/residency_snapshot.h"

namespace pageblame::residency {

class PagemapSampler {
 public:
  // Times are read from `clockid` (the trace's: perf record --clockid).
  explicit PagemapSampler(clockid_t clockid = CLOCK_MONOTONIC) : clockid_(clockid) {}
  // NotFound when the process is gone.
  absl::StatusOr<ResidencySnapshot> Take(uint32_t pid, SnapshotReason reason);
  // The same over only the pages of `within` (sorted, disjoint,
  // page-aligned) that lie in accessible mappings, without smaps_rollup
  // (it walks every page of the process): what the glibc heap walker needs
  // of its arenas, for a fraction of a large process's cost.
  absl::StatusOr<ResidencySnapshot> TakeWithin(uint32_t pid, SnapshotReason reason,
                                               const std::vector<PageRange>& within);
  uint64_t Now() const;

 private:
  absl::StatusOr<ResidencySnapshot> Read(uint32_t pid, SnapshotReason reason, const std::vector<PageRange>* within);

  clockid_t clockid_;
  std::vector<uint64_t> buffer_;
};

// The accessible mappings of /proc/PID/maps text: rows whose permissions are
// not "---", below the top of the user address space ([vsyscall] is not in
// pagemap), page-aligned.
std::vector<PageRange> AccessibleRanges(absl::string_view maps_text);

}  // namespace pageblame::residency

#endif  // PAGEBLAME_RESIDENCY_PAGEMAP_SAMPLER_H_

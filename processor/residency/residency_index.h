// ResidencyIndex: a trace's residency snapshots by process and time, checked
// against the trace they claim to describe.
//
//   TraceFacts facts{clockid, first_time, pids};
//   ASSIGN_OR_RETURN(ResidencyIndex r, ResidencyIndex::Load(path, facts));
//   if (const ResidencySnapshot* s = r.At(pid, t)) rss = s->ResidentBytes(a, b);
//
// A snapshot belongs to the trace when its clock is the trace's (perf record
// --clockid; perf's default clock cannot be read from user space, so a trace
// without --clockid has no snapshots), and it was taken of a traced process
// after the recording began (one second of slack: the trace's first time is
// its first memory call). There is no upper bound: an idle process makes no
// memory call for as long as the recorder keeps taking snapshots of it.
#ifndef PAGEBLAME_RESIDENCY_RESIDENCY_INDEX_H_
#define PAGEBLAME_RESIDENCY_RESIDENCY_INDEX_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "processor/residency/residency_snapshot.h"

namespace pageblame::residency {

// What a snapshot file is checked against.
struct TraceFacts {
  std::optional<int32_t> clockid;  // the trace's attr.clockid; unset: perf's clock
  uint64_t first_time = 0;
  std::vector<uint32_t> pids;
};

class ResidencyIndex {
 public:
  static constexpr uint64_t kSlack = 1000000000;  // ns

  // Reads and checks `path`. A file of another trace, of a trace recorded
  // without --clockid, broken or truncated: an error naming the file.
  static absl::StatusOr<ResidencyIndex> Load(const std::string& path, const TraceFacts& trace);
  // Checks parsed snapshots (tests; Load's second half).
  static absl::StatusOr<ResidencyIndex> Build(std::string path, int32_t clockid,
                                             std::vector<ResidencySnapshot> snapshots, const TraceFacts& trace);

  // The latest snapshot of `pid` taken at or before `time` (any time: the
  // latest), or null.
  const ResidencySnapshot* At(uint32_t pid, uint64_t time) const;
  // All of pid's snapshots, by time.
  const std::vector<ResidencySnapshot>& Of(uint32_t pid) const;
  const std::string& path() const { return path_; }
  size_t size() const { return count_; }

 private:
  std::string path_;
  size_t count_ = 0;
  absl::flat_hash_map<uint32_t, std::vector<ResidencySnapshot>> by_pid_;
};

}  // namespace pageblame::residency

#endif  // PAGEBLAME_RESIDENCY_RESIDENCY_INDEX_H_

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
// its first memory call) and before it ended, when that is known (its
// end_time, from the trace file's last write: an idle process makes no
// memory call for as long as the recorder keeps taking snapshots of it, so
// its last memory call is no bound), with kEndSlack for the snapshots
// `record` takes once perf has written its last.
#ifndef PAGEBLAME_RESIDENCY_RESIDENCY_INDEX_H_
#define PAGEBLAME_RESIDENCY_RESIDENCY_INDEX_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "processor/base/input_file.h"
#include "processor/residency/residency_snapshot.h"

namespace pageblame::residency {

// What a snapshot file is checked against.
struct TraceFacts {
  std::optional<int32_t> clockid;  // the trace's attr.clockid; unset: perf's clock
  uint64_t first_time = 0;
  std::vector<uint32_t> pids;
  // When the recording ended on the trace's clock; 0: unknown (no bound).
  uint64_t end_time = 0;
  // Snapshots and runtime tables up to this late are the recording's own:
  // `record` takes its last after perf wrote the trace's end.
  static constexpr uint64_t kEndSlack = uint64_t{30} * 1000000000;
  // Whether `time` (of a side file: a snapshot, a runtime table) falls
  // within the recording, slack included; "" or why not.
  std::string Outside(uint64_t time) const;
};

class ResidencyIndex {
 public:
  static constexpr uint64_t kSlack = 1000000000;  // ns

  // Reads and checks `path`. A file of another trace, of a trace recorded
  // without --clockid, broken or truncated: an error naming the file.
  static absl::StatusOr<ResidencyIndex> Load(const std::string& path, const TraceFacts& trace);
  // The same from a file already opened (by the side-file rule,
  // base/side_file_trust.h, when it was found beside the trace).
  static absl::StatusOr<ResidencyIndex> Load(const InputFile& file, const TraceFacts& trace);
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
  // When the last snapshot was taken (0: none): `record` takes one at the
  // stop, so this is when the recording ended.
  uint64_t last_time() const { return last_time_; }

 private:
  std::string path_;
  size_t count_ = 0;
  uint64_t last_time_ = 0;
  absl::flat_hash_map<uint32_t, std::vector<ResidencySnapshot>> by_pid_;
};

}  // namespace pageblame::residency

#endif  // PAGEBLAME_RESIDENCY_RESIDENCY_INDEX_H_

// HeapIndex: the heap snapshots of one trace (TRACE.heap, written by
// `pageblame record`: heap_snapshot_file.h), checked against the trace as
// residency snapshots are (residency/residency_index.h: the same clock,
// taken within the recording, of its processes), by pid and time.
//
//   ASSIGN_OR_RETURN(HeapIndex h, HeapIndex::Load(file, facts));
//   const HeapSnapshot* s = h.At(pid, time);   // the latest at or before time
//
// A snapshot without a time (a core's) cannot be placed in a trace: such a
// file is refused, as one on another clock or taken outside the recording.
#ifndef PAGEBLAME_HEAP_HEAP_INDEX_H_
#define PAGEBLAME_HEAP_HEAP_INDEX_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "processor/base/input_file.h"
#include "processor/heap/heap_snapshot.h"
#include "processor/heap/heap_snapshot_file.h"
#include "processor/residency/residency_index.h"

namespace pageblame::heap {

inline constexpr char kHeapFileWhat[] = "heap snapshot file";

class HeapIndex {
 public:
  // Reads, parses (bounds-checked) and checks `file`: errors name it.
  static absl::StatusOr<HeapIndex> Load(const InputFile& file, const residency::TraceFacts& trace);
  // The second half of Load, on a parsed file (tests).
  static absl::StatusOr<HeapIndex> Build(std::string path, HeapSnapshotFile file, const residency::TraceFacts& trace);

  // `pid`'s latest snapshot at or before `time` (ns on the trace's clock),
  // or null.
  const HeapSnapshot* At(uint32_t pid, uint64_t time) const;
  // `pid`'s snapshots in time order (empty if none).
  const std::vector<HeapSnapshot>& Of(uint32_t pid) const;
  // The pids with snapshots, ascending.
  std::vector<uint32_t> pids() const;
  size_t size() const { return count_; }
  const std::string& path() const { return path_; }
  // When the last snapshot was taken (0: none).
  uint64_t last_time() const;

 private:
  std::string path_;
  std::map<uint32_t, std::vector<HeapSnapshot>> by_pid_;
  size_t count_ = 0;
};

}  // namespace pageblame::heap

#endif  // PAGEBLAME_HEAP_HEAP_INDEX_H_

// SnapshotThinning: which records of a snapshot file (TRACE.rss, TRACE.heap)
// a long `record --max-size` keeps, so the snapshots stay within their
// share of the disk however long the recording runs (issue 42: all of the
// last hour, fewer before).
//
// Each process's records are judged apart, by age (from `now`, the newest
// record's time): every record of the last hour is kept; older ones one per
// bucket — 5 minutes up to 6 hours old, 30 minutes up to a day, 2 hours
// beyond — the earliest record of each bucket, buckets counted from time 0
// so a record kept once stays kept until its age puts it in a wider
// bucket. A process's first and last records are always kept (growth from
// the start, the state now), and so are the records the user or an event
// asked for (`pinned`: SIGUSR1, the stop, a process's exit). When what this
// keeps passes `budget` bytes, every width doubles (the last hour then
// keeps one per 10 ms, 20 ms, ...) until it fits; past kMaxLevel doublings
// only the always-kept are left.
//
//   std::vector<SnapshotRecordInfo> records = ...;   // in file order
//   SnapshotThinning::Plan p = SnapshotThinning::Choose(records, now, 64 << 20);
//   if (p.dropped_bytes > 0) ... rewrite the file with records[i] where p.keep[i]
#ifndef PAGEBLAME_RECORDER_SNAPSHOT_THINNING_H_
#define PAGEBLAME_RECORDER_SNAPSHOT_THINNING_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace pageblame::recorder {

struct SnapshotRecordInfo {
  uint32_t pid = 0;
  uint64_t time = 0;   // ns
  uint64_t bytes = 0;  // the record's size in the file
  bool pinned = false;
};

class SnapshotThinning {
 public:
  static constexpr uint64_t kSecond = 1000000000;
  static constexpr uint64_t kKeepAll = 3600 * kSecond;  // the last hour: every record
  static constexpr int kMaxLevel = 40;
  // The width past kMaxLevel: only the always-kept records stay.
  static constexpr uint64_t kOnlyAlwaysKept = ~uint64_t{0};

  struct Plan {
    std::vector<bool> keep;  // per record
    uint64_t kept_bytes = 0;
    uint64_t dropped_bytes = 0;
    uint64_t dropped = 0;    // records
    int level = 0;           // how many times the widths doubled to fit
  };

  // `records` in file order (each process's in time order); `now` in their
  // clock; `budget` 0: no bound (age only).
  static Plan Choose(absl::Span<const SnapshotRecordInfo> records, uint64_t now, uint64_t budget);

  // The bucket width for a record `age` old at `level` (0: keep every one).
  static uint64_t Width(uint64_t age, int level);

 private:
  static Plan AtLevel(absl::Span<const SnapshotRecordInfo> records, uint64_t now, int level);
  // The bytes of the records every level keeps: each process's first and
  // last, and the pinned.
  static uint64_t AlwaysKeptBytes(absl::Span<const SnapshotRecordInfo> records);
};

}  // namespace pageblame::recorder

#endif  // PAGEBLAME_RECORDER_SNAPSHOT_THINNING_H_

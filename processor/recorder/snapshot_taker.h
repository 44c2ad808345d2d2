// SnapshotTaker: takes residency snapshots of recorded processes
// (residency::PagemapSampler) and appends them to the trace's snapshot file,
// which it makes at the first snapshot (RecordingFiles::CreateSnapshotFile:
// made new, the old one set aside before perf started); then, once every
// process's residency snapshot of the moment is written, walks the glibc
// heaps of those processes into TRACE.heap (heap_recorder.h). Thread-safe: the snapshot thread
// takes periodic, requested and stop snapshots while the thread that traces
// the command takes its exit snapshot. Keeps what record's summary says.
//
//   SnapshotTaker taker(files.get(), CLOCK_MONOTONIC);   // files: RecordingFiles
//   taker.Take({pid}, SnapshotReason::kPeriodic);
//   for (const auto& p : taker.Summary().processes) ...
#ifndef PAGEBLAME_RECORDER_SNAPSHOT_TAKER_H_
#define PAGEBLAME_RECORDER_SNAPSHOT_TAKER_H_

#include <cstdint>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "processor/recorder/heap_recorder.h"
#include "processor/recorder/recording_files.h"
#include "processor/recorder/snapshot_writer.h"
#include "processor/residency/residency_snapshot.h"

namespace pageblame::recorder {

// A process's last snapshot, for the closing summary.
struct LastSnapshot {
  uint32_t pid = 0;
  std::string comm;
  uint64_t time = 0;
  residency::SnapshotReason reason = residency::SnapshotReason::kPeriodic;
  uint64_t resident = 0;  // bytes present over the accessible mappings
};

// A snapshot whose page sum differs from smaps_rollup's Rss by more than 1 %.
struct RollupMismatch {
  uint32_t pid = 0;
  uint64_t time = 0;
  uint64_t resident = 0, rollup_rss = 0;
};

struct TakerSummary {
  std::string path;                    // the snapshot file, "" if none was made
  size_t snapshots = 0;                // written
  std::vector<LastSnapshot> processes;  // by pid
  std::optional<RollupMismatch> mismatch;  // the first
  std::string error;                   // the first failure (file or pagemap), "" if none
  HeapRecordSummary heap;              // the heap snapshots beside them
  SnapshotWriter::ThinSummary thinned;  // record --max-size: what thinning by age dropped
};

class SnapshotTaker {
 public:
  // `files` outlives the taker.
  SnapshotTaker(RecordingFiles* files, clockid_t clockid) : files_(files), clockid_(clockid), heap_(files, clockid) {}

  // Snapshots each process and appends it; a process gone meanwhile is
  // skipped. Returns how many were written. After a file error it takes no
  // more (the error is in Summary()). Then walks the heaps of the processes
  // written (HeapRecorder).
  size_t Take(const std::vector<uint32_t>& pids, residency::SnapshotReason reason);
  TakerSummary Summary() const;
  // Before the first Take: HeapRecorder::Skip.
  void SkipHeapOf(std::function<bool(uint32_t pid)> skip) { heap_.Skip(std::move(skip)); }
  // Before the first Take (record --max-size): keep TRACE.rss and
  // TRACE.heap each within `budget` bytes, thinned by age
  // (snapshot_thinning.h); 0: no bound.
  void ThinWithin(uint64_t budget) {
    thin_budget_ = budget;
    heap_.ThinWithin(budget);
  }

 private:
  // The residency half of Take: the snapshots written go to `taken`.
  size_t TakeResidency(const std::vector<uint32_t>& pids, residency::SnapshotReason reason,
                       std::vector<residency::ResidencySnapshot>* taken);
  // Makes the file on first use; false after a file error.
  bool EnsureWriter();
  void Note(const residency::ResidencySnapshot& s);
  void Fail(const std::string& error);

  RecordingFiles* const files_;
  const clockid_t clockid_;
  uint64_t thin_budget_ = 0;
  mutable std::mutex mu_;  // guards what follows; never held while reading pagemap
  std::unique_ptr<SnapshotWriter> writer_;
  bool failed_ = false;
  size_t count_ = 0;
  std::map<uint32_t, LastSnapshot> last_;
  // Pids whose exit snapshot is written: no other snapshot of them follows
  // (the command's pid, not reused while perf, its parent, runs).
  std::set<uint32_t> exited_;
  std::optional<RollupMismatch> mismatch_;
  std::string error_;
  HeapRecorder heap_;  // thread-safe itself
};

}  // namespace pageblame::recorder

#endif  // PAGEBLAME_RECORDER_SNAPSHOT_TAKER_H_

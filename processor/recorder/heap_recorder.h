// HeapRecorder: the heap snapshots `pageblame record` takes beside its
// residency snapshots. At each residency snapshot of a process whose malloc
// is glibc's, it walks the process's heap (heap/heap_walker.h: read with
// process_vm_readv, never stopped; a torn read retried or marked by the
// walker) and appends the HeapSnapshot to TRACE.heap, made on first use
// through RecordingFiles (O_EXCL|O_NOFOLLOW, 0600, under the checked
// directory). libc's layout (its debug file) is read once per process.
// The resident figures come from the residency snapshot just
// taken, so pagemap is read once per moment; the heap snapshot is stamped
// with the start of its walk on the recording's clock.
//
// Cost: a walk runs after the residency snapshots of its moment, on the same
// thread. A periodic walk of a process is skipped while less than three
// times its last walk's duration has passed since that walk ended: heap
// walks then take at most about a quarter of the snapshot thread's time,
// and a residency snapshot is late by at most one walk. Stop, exit and
// requested snapshots always walk. A process with another allocator
// (jemalloc, tcmalloc, mimalloc, musl) gets no record, and a note once; a
// walk that fails is noted once and tried again at the next snapshot.
//
//   HeapRecorder heap(files, CLOCK_MONOTONIC);
//   heap.Walk(pid, SnapshotReason::kPeriodic, &residency_snapshot);
//   HeapRecordSummary s = heap.Summary();   // snapshots, bytes, walk times
//
// Thread-safe: the snapshot thread and the exit tracer call Walk.
#ifndef PAGEBLAME_RECORDER_HEAP_RECORDER_H_
#define PAGEBLAME_RECORDER_HEAP_RECORDER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "processor/heap/heap_walker.h"
#include "processor/recorder/recording_files.h"
#include "processor/recorder/snapshot_writer.h"
#include "processor/residency/residency_snapshot.h"

namespace pageblame::recorder {

struct HeapRecordSummary {
  std::string path;            // TRACE.heap, "" if none was made
  size_t snapshots = 0;        // records written
  uint64_t bytes = 0;          // their bytes (the file header not counted)
  size_t skipped = 0;          // periodic walks skipped to keep residency snapshots on time
  double walk_seconds_max = 0;
  double walk_seconds_total = 0;  // of the written ones
  std::vector<std::string> notes;  // once per process: another allocator, a failed walk
  std::string error;           // the first file error, "" if none
  SnapshotWriter::ThinSummary thinned;  // record --max-size: what thinning by age dropped
};

class HeapRecorder {
 public:
  // `files` outlives the recorder.
  HeapRecorder(RecordingFiles* files, clockid_t clockid) : files_(files), clockid_(clockid) {}

  // Walks `pid`'s heap if due (above) and appends the snapshot; `rss`, the
  // residency snapshot of the same moment, may be null.
  void Walk(uint32_t pid, residency::SnapshotReason reason, const residency::ResidencySnapshot* rss);
  HeapRecordSummary Summary() const;
  // Before the first Walk: processes for which `skip` says true are not
  // walked (record: the command's pid while it still runs perf's own
  // executable, before its exec: perf's heap, not the command's).
  void Skip(std::function<bool(uint32_t pid)> skip) { skip_ = std::move(skip); }
  // Before the first Walk: keep TRACE.heap within `budget` bytes
  // (SnapshotWriter::ThinWithin; 0: no bound).
  void ThinWithin(uint64_t budget) { thin_budget_ = budget; }

 private:
  using Clock = std::chrono::steady_clock;
  struct PerProcess {
    bool foreign = false;      // another allocator: never walked again
    bool noted = false;        // a note was made for it
    Clock::time_point next_due{};  // periodic walks wait until then
  };
  // Whether `pid` is to be walked now; counts a skip.
  bool Due(uint32_t pid, residency::SnapshotReason reason);
  void Note(uint32_t pid, const std::string& text, bool foreign);
  // Appends the encoded record; false after a file error.
  bool Write(const std::string& record, const SnapshotRecordInfo& info, double seconds);

  RecordingFiles* const files_;
  const clockid_t clockid_;
  std::function<bool(uint32_t)> skip_;
  uint64_t thin_budget_ = 0;
  // One walk at a time (the exit tracer's and the loop's rarely meet);
  // guards libc_ too.
  std::mutex walk_mu_;
  heap::LibcCache libc_;
  mutable std::mutex mu_;  // guards what follows; never held while walking
  std::unique_ptr<SnapshotWriter> writer_;
  bool failed_ = false;
  std::map<uint32_t, PerProcess> processes_;
  HeapRecordSummary summary_;
};

}  // namespace pageblame::recorder

#endif  // PAGEBLAME_RECORDER_HEAP_RECORDER_H_

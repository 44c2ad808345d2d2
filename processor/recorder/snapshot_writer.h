// SnapshotWriter: appends residency snapshots to a trace's snapshot file
// (TRACE.rss, residency/snapshot_file.h) while perf records the trace; with
// CreateWithHeader and AppendRecord, records already encoded, as the heap
// snapshots of TRACE.heap (heap/heap_snapshot_file.h).
//
//   ASSIGN_OR_RETURN(int fd, files->CreateSnapshotFile());   // recording_files.h
//   ASSIGN_OR_RETURN(auto w, SnapshotWriter::Create(fd, "t.data.rss", CLOCK_MONOTONIC));
//   RETURN_IF_ERROR(w->Append(snapshot));   // from any thread
//
// The file is written in place, not through a temporary file: it grows with
// the recording as perf's trace does, so a recording that is killed still
// has every snapshot written before (each record is one write(): a kill can
// only cut the last one short, which the reader reports as truncated).
//
// With ThinWithin (record --max-size) the file is kept within a budget: when
// it passes it, or a quarter of it is records old enough to go
// (snapshot_thinning.h), it is rewritten with the records kept — a new file
// made beside it (O_EXCL|O_NOFOLLOW under the directory's descriptor),
// renamed over it — so a reader or a kill sees the old file or the new one,
// whole.
#ifndef PAGEBLAME_RECORDER_SNAPSHOT_WRITER_H_
#define PAGEBLAME_RECORDER_SNAPSHOT_WRITER_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "processor/recorder/snapshot_thinning.h"
#include "processor/residency/residency_snapshot.h"

namespace pageblame::recorder {

class SnapshotWriter {
 public:
  // Takes the new, empty file `fd` (made by RecordingFiles; `path` names it
  // in messages; closed with the writer, or here on failure) and writes the
  // file header.
  static absl::StatusOr<std::unique_ptr<SnapshotWriter>> Create(int fd, std::string path, int32_t clockid);
  // The same, for a file whose header is `header`.
  static absl::StatusOr<std::unique_ptr<SnapshotWriter>> CreateWithHeader(int fd, std::string path,
                                                                          const std::string& header);
  ~SnapshotWriter();
  SnapshotWriter(const SnapshotWriter&) = delete;
  SnapshotWriter& operator=(const SnapshotWriter&) = delete;

  // Appends one record with one write(). Thread-safe.
  absl::Status Append(const residency::ResidencySnapshot& s);
  // Appends one encoded record with one write(), described by `info` (its
  // bytes are set here). Thread-safe.
  absl::Status AppendRecord(const std::string& bytes, SnapshotRecordInfo info);
  const std::string& path() const { return path_; }

  // Before the first append: keep the file, named `name` in the directory
  // `dir_fd` (held open by the caller), within `budget` bytes.
  struct Thinning {
    int dir_fd = -1;
    std::string name;
    uint64_t budget = 0;
  };
  void ThinWithin(Thinning thinning);
  struct ThinSummary {
    uint64_t records = 0;     // appended
    uint64_t dropped = 0;     // records thinned away
    uint64_t rewrites = 0;
    uint64_t file_bytes = 0;  // now
    std::string error;        // why thinning stopped ("" if it did not)
  };
  ThinSummary Thinned() const;

 private:
  struct Record {
    uint64_t offset = 0;
    SnapshotRecordInfo info;
  };
  SnapshotWriter(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  absl::Status WriteAll(int fd, const std::string& bytes);
  // After an append: rewrite the file if it is over budget or a quarter of
  // it may go. A failure stops thinning (said in the summary), not writing.
  void MaybeThin(uint64_t now);
  absl::Status Rewrite(const SnapshotThinning::Plan& plan);
  // Copies records_[i] for the kept i from fd_ into `to`; their new offsets
  // in *kept.
  absl::Status CopyKept(int to, const SnapshotThinning::Plan& plan, std::vector<Record>* kept);

  std::string path_;
  int fd_;
  std::string header_;
  uint64_t file_bytes_ = 0;
  Thinning thinning_;
  std::vector<Record> records_;  // in the file now (with thinning only)
  ThinSummary thinned_;
  mutable std::mutex mu_;
};

}  // namespace pageblame::recorder

#endif  // PAGEBLAME_RECORDER_SNAPSHOT_WRITER_H_

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
#ifndef PAGEBLAME_RECORDER_SNAPSHOT_WRITER_H_
#define PAGEBLAME_RECORDER_SNAPSHOT_WRITER_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
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
  // Appends one encoded record with one write(). Thread-safe.
  absl::Status AppendRecord(const std::string& bytes);
  const std::string& path() const { return path_; }

 private:
  SnapshotWriter(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  absl::Status WriteAll(const std::string& bytes);
  std::string path_;
  int fd_;
  std::mutex mu_;
};

}  // namespace pageblame::recorder

#endif  // PAGEBLAME_RECORDER_SNAPSHOT_WRITER_H_

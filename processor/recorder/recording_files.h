// RecordingFiles: every file `pageblame record` makes — the trace, its
// residency snapshots (TRACE.rss), its heap snapshots (TRACE.heap), the kernel's table of mappings at the
// attach (TRACE.attach-maps) and its runtime tables and the copies of the
// runtime's perf map and jitdump (TRACE.runtime/) —
// made so that root, recording in a directory someone else can reach, never
// writes through a link or into a file another user planted.
//
// The trace's directory is opened once and every name is resolved against
// that descriptor (openat/renameat/unlinkat/mkdirat), so swapping the
// directory or a parent afterwards changes nothing. Every file is created new
// (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600: they show the process's memory); a
// link, file or directory already at a side file's name is moved or removed,
// never opened. A directory writable by its group or others is refused unless
// `force`: another user could squat the names there (and with --force, the
// files are still made as above).
//
// perf's own rule for an existing trace (tools/perf/util/data.c,
// check_backup: a non-empty TRACE is renamed TRACE.old) is applied here,
// before perf starts, to the trace and its side files together: TRACE.rss
// becomes TRACE.old.rss, TRACE.heap TRACE.old.heap, TRACE.attach-maps TRACE.old.attach-maps and
// TRACE.runtime TRACE.old.runtime, an older
// TRACE.old's side files go with the trace perf would replace. perf then
// finds an empty trace we made and writes into it: through its path when
// only root or the user running pageblame can change the directory and
// every directory above it; else through /proc/self/fd/N (the descriptor
// of the file made here, which perf inherits), since its path could be
// swapped for a link between our creation and perf's open.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<RecordingFiles> files, RecordingFiles::Prepare("t.data", false));
//   argv: "-o", files->perf_output();   ... files->CreateSnapshotFile() ...
//   RETURN_IF_ERROR(files->WriteRuntimeTable("1234-5000.txt", table_text));
#ifndef PAGEBLAME_RECORDER_RECORDING_FILES_H_
#define PAGEBLAME_RECORDER_RECORDING_FILES_H_

#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace pageblame::recorder {

class RecordingFiles {
 public:
  // What Prepare did with a recording already at the trace's name, for the
  // user ("t.data exists: kept as t.data.old, ...").
  struct SetAside {
    bool moved = false;       // TRACE became TRACE.old
    bool replaced_old = false;  // an older TRACE.old was replaced
    bool was_link = false;    // TRACE was a symbolic link (moved, never followed)
    bool rss = false;         // TRACE.rss became TRACE.old.rss
    bool heap = false;        // TRACE.heap became TRACE.old.heap
    bool attach_maps = false;  // TRACE.attach-maps became TRACE.old.attach-maps
    bool runtime = false;     // TRACE.runtime became TRACE.old.runtime
  };

  // Judges the directory, sets aside what is there (see above) and creates
  // the trace, empty. `trace` may not be "-" (standard output: no files).
  // PermissionDenied for a shared directory without `force`; errors name
  // the file and what was found there.
  static absl::StatusOr<std::unique_ptr<RecordingFiles>> Prepare(const std::string& trace, bool force);
  ~RecordingFiles();
  RecordingFiles(const RecordingFiles&) = delete;
  RecordingFiles& operator=(const RecordingFiles&) = delete;

  const std::string& trace() const { return trace_; }
  // The path perf is given with -o (the trace's, or /proc/self/fd/N).
  const std::string& perf_output() const { return perf_output_; }
  // The descriptor perf must inherit (perf_output names it), or -1.
  int perf_fd() const { return through_fd_ ? trace_fd_ : -1; }
  const SetAside& set_aside() const { return set_aside_; }
  // The trace's directory, checked and held open (for its chunks,
  // recorder/chunk_store.h), and the trace's name in it.
  int dir_fd() const { return dir_fd_; }
  const std::string& base() const { return base_; }
  // Whether perf wrote nothing into the trace made for it (it failed before
  // its header): then the trace is removed, as if never made.
  bool RemoveTraceIfEmpty();
  // Whether perf has written its header into the trace: it took its clock
  // reference (HEADER_CLOCK_DATA) before that (tools/perf/builtin-record.c,
  // record__init_clock), so a side file stamped from now on lies within
  // the recording.
  bool PerfWroteHeader() const;

  // Creates TRACE.rss and returns its descriptor, open for appending and
  // reading back (the caller closes it). Thread-safe.
  absl::StatusOr<int> CreateSnapshotFile();
  // Creates TRACE.heap (heap/heap_snapshot_file.h) the same way.
  absl::StatusOr<int> CreateHeapSnapshotFile();
  // Their names in dir_fd().
  std::string SnapshotFileName() const;
  std::string HeapSnapshotFileName() const;
  // Writes `bytes` into TRACE.runtime/NAME, made new (the directory too, on
  // first use). Thread-safe.
  absl::Status WriteRuntimeTable(absl::string_view name, absl::string_view bytes);
  std::string RuntimeTablePath(absl::string_view name) const;
  // Writes TRACE.attach-maps, made new (replay/attach_maps.h). Thread-safe.
  absl::Status WriteAttachMaps(absl::string_view bytes);
  std::string AttachMapsPath() const;
  // Whether `name` is one of the files record puts in TRACE.runtime/: a
  // runtime table (PID-TIME.txt), or a copy of a runtime's perf-PID.map or
  // jit-PID.dump.
  static bool IsRuntimeDirFile(absl::string_view name);

 private:
  RecordingFiles(std::string trace, std::string dir, std::string base, int dir_fd)
      : trace_(std::move(trace)), dir_(std::move(dir)), base_(std::move(base)), dir_fd_(dir_fd) {}
  absl::Status Judge(bool force);
  absl::Status SetAsideOld();
  absl::Status SetAsideSideFiles(bool moved);
  // The side file `name` (of the trace) goes to `old_name` when the trace
  // moved, else it is removed; `moved_it` says it went.
  absl::Status SetAsideFile(const std::string& name, const std::string& old_name, bool moved, bool* moved_it);
  // Makes `name` in the trace's directory, new, with `bytes`.
  absl::Status WriteNew(int dir_fd, const std::string& name, const std::string& path, absl::string_view bytes);
  absl::Status ClearRuntimeDir(const std::string& name);
  absl::Status CreateTrace();
  // Makes the side file `name` new for appending (O_EXCL|O_NOFOLLOW, 0600).
  absl::StatusOr<int> CreateAppendFile(const std::string& name);
  absl::StatusOr<int> RuntimeDir();
  std::string PathOf(absl::string_view name) const;

  const std::string trace_;  // as the user named it
  const std::string dir_;    // its directory, for messages
  const std::string base_;   // its name in that directory
  const int dir_fd_;
  int trace_fd_ = -1;
  bool through_fd_ = false;
  std::string perf_output_;
  SetAside set_aside_;
  std::mutex mu_;       // guards runtime_fd_
  int runtime_fd_ = -1;
};

}  // namespace pageblame::recorder

#endif  // PAGEBLAME_RECORDER_RECORDING_FILES_H_

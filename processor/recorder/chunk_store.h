// ChunkStore: the chunks perf writes for `record --max-size` (perf record
// --switch-output=SIZE), seen through the trace's checked directory
// (recording_files.h). perf 6.1 writes into TRACE itself; at each cut it
// renames TRACE to TRACE.<YYYYmmddHHMMSScc> (perf/chunk_files.h) and makes
// TRACE anew by name (perf_data__switch) — so --max-size is only for a
// directory no one else can change (RecordingFiles::perf_fd() == -1), and
// each chunk is checked before it is read or removed: a regular file (never
// followed through a link), owned by the user recording, with one link.
//
//   ChunkStore store(files->dir_fd(), files->base(), files->trace());
//   for (const std::string& name : store.Closed()) {
//     ASSIGN_OR_RETURN(int fd, store.Open(name));  // read /proc/self/fd/FD
//     ...; ::close(fd);  RETURN_IF_ERROR(store.Remove(name));
//   }
//   uint64_t used = store.DiskBytes();  // TRACE, its chunks and side files
//   ASSIGN_OR_RETURN(auto f, store.NewIndex(limit));  // TRACE.index, streamed
//   RETURN_IF_ERROR(replay::RecordingFile::Write(..., f.get()));
//   if (!f->overflowed()) RETURN_IF_ERROR(f->Commit());  // else dropped
#ifndef PAGEBLAME_RECORDER_CHUNK_STORE_H_
#define PAGEBLAME_RECORDER_CHUNK_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "processor/base/byte_sink.h"

namespace pageblame::recorder {

class ChunkStore {
 public:
  // `dir_fd` stays owned by the caller and open while this is used.
  ChunkStore(int dir_fd, std::string base, std::string trace)
      : dir_fd_(dir_fd), base_(std::move(base)), trace_(std::move(trace)) {}

  // The names of the closed chunks there now, in time order.
  std::vector<std::string> Closed() const;
  // `name` opened for reading once checked (see above); the caller closes it.
  absl::StatusOr<int> Open(const std::string& name) const;
  // Removes the chunk `name` (a name Closed() gave).
  absl::Status Remove(const std::string& name) const;
  // Bytes the recording takes on disk now (allocated blocks): TRACE, its
  // chunks and its side files (TRACE.index, TRACE.rss, TRACE.heap, TRACE.attach-maps,
  // the files in TRACE.runtime/); an earlier recording's TRACE.old* not.
  uint64_t DiskBytes() const;
  // Writes TRACE.index (made new, mode 0600; one there is replaced): into
  // TRACE.index.new (one left by a kill is removed first; made with
  // O_EXCL|O_NOFOLLOW), synced, renamed over TRACE.index, the directory
  // synced: the name holds a whole index at every moment, old or new.
  absl::Status WriteIndex(const std::string& bytes) const;
  // The trace's directory (the caller's).
  int dir_fd() const { return dir_fd_; }

  // TRACE.index written a piece at a time, as WriteIndex writes it whole
  // (the same temporary file, sync and rename at Commit()), so the recorder
  // never holds an index's bytes (a checkpoint of a day's recording is tens
  // of MiB). Past `limit` bytes (0: no limit) nothing more is written, only
  // counted: written() says how long the index would be, overflowed() that
  // it did not fit, and the try took at most `limit` of disk. Dropped
  // without Commit() (or overflowed), the temporary file is removed and
  // TRACE.index stays as it was.
  class IndexFile : public PatchableSink {
   public:
    ~IndexFile() override;
    IndexFile(const IndexFile&) = delete;
    IndexFile& operator=(const IndexFile&) = delete;
    bool overflowed() const { return written() > limit_; }
    void Overwrite(uint64_t at, std::string_view bytes) override;
    // The first write that failed, naming the file.
    absl::Status status() const override { return status_; }
    // Syncs the file and renames it over TRACE.index, then syncs the
    // directory; FailedPrecondition if it overflowed.
    absl::Status Commit();

   protected:
    void Take(std::string_view bytes) override;

   private:
    friend class ChunkStore;
    IndexFile(const ChunkStore* store, int fd, uint64_t limit) : store_(store), fd_(fd), limit_(limit) {}
    void Write(std::string_view bytes, int64_t at);
    const ChunkStore* store_;
    int fd_;
    uint64_t limit_;
    absl::Status status_;
  };
  absl::StatusOr<std::unique_ptr<IndexFile>> NewIndex(uint64_t limit) const;
  // "DIR/TRACE.<stamp>" as the user named the trace, for messages.
  std::string PathOf(const std::string& name) const;

 private:
  uint64_t RuntimeDirBytes(const std::string& name) const;
  std::string IndexName() const;

  int dir_fd_;
  std::string base_;
  std::string trace_;
};

}  // namespace pageblame::recorder

#endif  // PAGEBLAME_RECORDER_CHUNK_STORE_H_

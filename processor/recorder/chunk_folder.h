// ChunkFolder: `record --max-size`'s folding. While perf records in chunks
// (chunk_store.h), a thread replays each closed chunk as soon as perf closes
// it — one replay over all of them in order (perf/chunk_chain_reader.h), so
// every bit of replay state a chunk boundary cuts through (a call whose
// enter and exit are in two chunks, the zstd stream of -z, the processes
// and their address spaces, the interned stacks) simply carries on in
// memory — and removes the chunk once read. At the stop it hands over the
// whole replayed recording, which the recorder writes as TRACE.index
// (replay/recording_file.h, RecordingFile::kFolded): the recording's disk
// is then the index and the side files, and while perf records at most the
// chunk perf writes, a closed one being read, and the side files.
//
//   ChunkFolder folder(store, "app.data", max_size / 2);
//   folder.Start();
//   ... perf records ...
//   folder.PerfEnded();
//   RETURN_IF_ERROR(folder.Finish());   // app.data.index written
//
// Checkpoints: while perf records, once a chunk is folded and then every
// `checkpoint_every` seconds, the loader pauses the replay (it waits with
// every event perf's round order lets go replayed) and the folder writes
// the recording so far as TRACE.index, thinned as at the stop but within
// half the index's share (it and the one it replaces are both on disk
// while it is renamed over it), its header
// saying it is a checkpoint (replay::FoldCheckpoint: when, how many chunks,
// the last, up to which trace time), atomically (ChunkStore::WriteIndex).
// A recorder killed with SIGKILL leaves the last one, which the commands
// read (session/checkpoint_note.h); the index at the stop replaces it.
//
// Limits (issue 42): the folded state is thinned as it is written (each
// checkpoint, the stop), never in memory: the recorder's memory grows with
// the calls folded until the stop (thinning it in place would renumber the
// calls and versions the replay's address spaces hold). What was folded
// after the last checkpoint is lost with a kill. The stack and string
// tables are never thinned. A chunk that cannot be read stops the folding
// (Finish says why; the chunks from it on are kept).
#ifndef PAGEBLAME_RECORDER_CHUNK_FOLDER_H_
#define PAGEBLAME_RECORDER_CHUNK_FOLDER_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "processor/recorder/chunk_store.h"
#include "processor/replay/recording_file.h"
#include "processor/replay/trace_loader.h"

namespace pageblame::recorder {

class ChunkFolder {
 public:
  struct Stats {
    uint64_t chunks = 0;          // folded and removed
    uint64_t chunk_bytes = 0;     // their size: what perf wrote
    double fold_seconds = 0;      // reading and replaying them (waits excluded)
    double max_fold_seconds = 0;  // the slowest chunk's
    uint64_t peak_disk = 0;       // the most ChunkStore::DiskBytes() was, seen at each poll
    uint64_t index_bytes = 0;     // TRACE.index as written
    uint64_t thinned_before = 0;  // where it was thinned (0: not)
    // Checkpoints: TRACE.index written while perf records (see above).
    uint64_t checkpoints = 0;
    double checkpoint_seconds = 0;      // all of them, the replay paused meanwhile
    double max_checkpoint_seconds = 0;  // the slowest's
    uint64_t checkpoint_bytes = 0;      // the largest written
    std::string checkpoint_error;       // the first that could not be written ("" if none)
  };

  // A checkpoint this long after the one before, at the first round's end
  // after a chunk was folded (the first as soon as one was).
  static constexpr double kCheckpointEvery = 60;

  // `max_index_bytes`: the index's share of --max-size (0: no bound).
  // `checkpoint_every`: seconds between checkpoints (0: none).
  ChunkFolder(ChunkStore store, const std::string& trace, uint64_t max_index_bytes,
              double checkpoint_every = kCheckpointEvery);
  ~ChunkFolder();

  void Start();
  // perf has exited: the chunks there now are the last.
  void PerfEnded() { perf_ended_ = true; }
  // Waits for the folding to end and writes the replayed recording as
  // TRACE.index (RecordingFile::kFolded), thinned when it would pass its
  // share: at the earliest moment (to 1/4096 of the recording's span) from
  // which on it fits (IndexCodec::EncodeThinned); at the end of the
  // recording if nothing fits (the live regions alone: the summary warns).
  absl::Status Finish();
  // After Finish(); peak_disk includes the index written.
  const Stats& stats() const { return stats_; }
  std::string IndexPath() const;

 private:
  // The next closed chunk, opened checked, as /proc/self/fd/N; "" once perf
  // ended and none is left. Polls every 50 ms.
  absl::StatusOr<std::string> NextChunk();
  void ChunkDone(const std::string& path);
  void NoteDisk();
  // The recording's index bytes, thinned to fit max_index_bytes_ if need
  // be; a checkpoint's with `checkpoint`, within half of that.
  std::string Fitted(const replay::LoadedView& t, const replay::RecordingFile::Identity& id,
                     const replay::FoldCheckpoint* checkpoint);
  // A checkpoint's cut, guessed: the bytes taken as linear in the calls and
  // versions kept (IndexCodec::KeptByThinning, counted without encoding),
  // through the encodings at `early` (`early_bytes`, too many) and at the
  // end; "" if that cut does not fit after all (then Thinned searches).
  std::string Guessed(const replay::LoadedView& t, const replay::RecordingFile::Identity& id,
                      const replay::FoldCheckpoint* checkpoint, uint64_t limit, uint64_t early, uint64_t early_bytes);
  // Fitted's search: thinned at the earliest cut after `early` that fits
  // `limit` (at the end if none does).
  std::string Thinned(const replay::LoadedView& t, const replay::RecordingFile::Identity& id,
                      const replay::FoldCheckpoint* checkpoint, uint64_t limit, uint64_t early);
  bool CheckpointDue() const;
  // Writes the recording so far as TRACE.index (the replay waits meanwhile).
  void WriteCheckpoint(const replay::LoadedView& t);

  ChunkStore store_;
  replay::LoadOptions load_;
  uint64_t max_index_bytes_;
  std::thread thread_;
  std::atomic<bool> perf_ended_{false};
  absl::StatusOr<std::unique_ptr<replay::LoadedTrace>> result_;
  // Chunks handed out and not yet done: path -> (name, fd).
  std::map<std::string, std::pair<std::string, int>> open_;
  std::string last_name_;  // the last chunk handed out
  std::string last_done_;  // the last chunk read to its end and removed
  double started_ = -1;    // when the chunk being read was handed out
  double checkpoint_every_;
  double last_checkpoint_ = -1;     // when the last was written (-1: none yet)
  uint64_t checkpoint_chunks_ = 0;  // chunks folded into it
  uint64_t last_cut_ = 0;           // where Thinned last cut (0: never)
  Stats stats_;
};

}  // namespace pageblame::recorder

#endif  // PAGEBLAME_RECORDER_CHUNK_FOLDER_H_

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
// Memory: `max_memory_bytes` bounds the index in memory as it grows with
// the recording (TraceIndex::BoundedBytes: the calls, versions and madvise
// calls, the stacks and frames, the strings, the processes and their live
// maps). At each pause of the replay the folded state is thinned
// (TraceIndex::ThinBefore, and the stack table with it: the loader's
// ThinStacks): at the last checkpoint's cut (what it left out no later
// index would keep), and further when the index is within a step (1/16 of
// the bound) of it: to 3/4 of the bound, at the earliest cut whose calls,
// versions, stacks and the rest fit (IndexThinning::EarliestCutWithin).
// Besides the checkpoints, the replay pauses for that alone, within a
// chunk as well as at its end: the loader asks after every record whether
// to pause (LoadOptions::checkpoint_due), which counts them. Each look
// counts with the index what the calls the replay holds will add (perf's
// round order lets a round's events into the index at its end: a call and
// a version each, LoadedView::held_calls), and the stacks they name as
// kept; it measures the growth a record since the last look (the pace:
// the fastest of the last looks', decaying by 1/8 a look, as rounds make
// it uneven) and plans the next once half the room left would be taken
// at that pace (a step at least, the room at most; between 256 and 2^16
// records). So the index passes the bound by about a step (17-20 % on
// bench/stacks.sh's churn of distinct stacks at 4 MiB, where a round is
// ~9 k calls: bench/HISTORY.md); a round larger than the bound passes it
// by that round. A look that thins nothing is a pass over the held events
// and, if stacks have aliases, the calls; one that thins, a few.
// Outside the bound: the blocks made ahead for the replay
// (TraceIndex::PrepareBlocks), the replay's buffers and sorter, the
// unwinder and DWARF, the per-thread replay state; none grows with the
// calls (bench/HISTORY.md). Each index written goes to disk a piece at a
// time (WriteFitted), and what a pause freed is given back to the system
// before the next chunk.
//
// Limits (issue 42): what was folded after the last checkpoint is lost
// with a kill. The string table is counted in the bound but thinned in
// the index file only (what its kept calls, versions and processes name),
// not in memory: its ids are held all over the replay (threads' comms,
// calls waiting for their exit, the sorter's events, the heap's name),
// the views it gives are promised to stay valid (StringTable::Get), and
// its comms and paths are few. If what no thinning makes
// smaller (strings, processes, live maps) passes the bound, the state is
// thinned to its end and the bound passed (the summary says by how much).
// A chunk that cannot be read stops the folding (Finish says why; the
// chunks from it on are kept).
#ifndef PAGEBLAME_RECORDER_CHUNK_FOLDER_H_
#define PAGEBLAME_RECORDER_CHUNK_FOLDER_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "processor/recorder/chunk_store.h"
#include "processor/recorder/dir_watch.h"
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
    // Thinning in memory (see above).
    uint64_t memory_thinnings = 0;  // times the state in memory was thinned
    uint64_t memory_cut = 0;        // the latest cut it was thinned at (0: never)
    // What max_memory_bytes bounds (TraceIndex::BoundedBytes: the calls,
    // versions, madvise calls, stacks and frames, strings, processes and
    // live maps) at its most, seen at each look before it thinned and at
    // the stop.
    uint64_t peak_memory = 0;
    // The whole index in memory at its most, seen at the same moments: the
    // same with the blocks made ahead for the replay (TraceIndex::MemoryBytes).
    uint64_t peak_index_memory = 0;
    uint64_t memory_looks = 0;  // pauses that looked at the memory
  };

  // The folding thread's name (/proc/PID/task/TID/comm).
  static constexpr const char* kThreadName = "pb-fold";

  // A checkpoint this long after the one before, at the first round's end
  // after a chunk was folded (the first as soon as one was).
  static constexpr double kCheckpointEvery = 60;

  // `max_index_bytes`: the index's share of --max-size (0: no bound).
  // `checkpoint_every`: seconds between checkpoints (0: none).
  // `max_memory_bytes`: the bound of the index in memory (0: none).
  ChunkFolder(ChunkStore store, const std::string& trace, uint64_t max_index_bytes,
              double checkpoint_every = kCheckpointEvery, uint64_t max_memory_bytes = 0);
  ~ChunkFolder();

  void Start();
  // perf has exited: the chunks there now are the last.
  void PerfEnded() {
    perf_ended_ = true;
    watch_.Wake();
  }
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
  // ended and none is left. Waits for perf's cut (DirWatch), looking at the
  // directory (and the disk used) at each and every kIdleWaitMs.
  absl::StatusOr<std::string> NextChunk();
  void ChunkDone(const std::string& path);
  void NoteDisk();
  // Writes the recording as TRACE.index, thinned to fit max_index_bytes_
  // if need be; a checkpoint's with `checkpoint`, within half of that.
  // Returns its size. Streamed (ChunkStore::IndexFile): no index is ever
  // whole in memory, a try that does not fit stops at the limit on disk,
  // and the sizes the search compares are counted, not kept.
  absl::StatusOr<uint64_t> WriteFitted(const replay::LoadedView& t, const replay::RecordingFile::Identity& id,
                                       const replay::FoldCheckpoint* checkpoint);
  // The index thinned at `cut` written as TRACE.index if it takes at most
  // `limit` bytes (0: any); nullopt (TRACE.index as it was) if not.
  // `size` (if given): the bytes it takes, written or not.
  absl::StatusOr<std::optional<uint64_t>> TryWrite(const replay::LoadedView& t,
                                                   const replay::RecordingFile::Identity& id, uint64_t cut,
                                                   const replay::FoldCheckpoint* checkpoint, uint64_t limit,
                                                   uint64_t* size = nullptr);
  // The bytes the index thinned at `cut` would take (encoded, not kept).
  static uint64_t Size(const replay::LoadedView& t, const replay::RecordingFile::Identity& id, uint64_t cut,
                       const replay::FoldCheckpoint* checkpoint);
  // A checkpoint's cut, guessed: the bytes taken as linear in the calls and
  // versions kept (IndexCodec::KeptByThinning, counted without encoding),
  // through the encodings at `early` (`early_bytes`, too many) and at the
  // end, and written there; nullopt if that cut does not fit after all
  // (then Thinned searches).
  absl::StatusOr<std::optional<uint64_t>> Guessed(const replay::LoadedView& t,
                                                  const replay::RecordingFile::Identity& id,
                                                  const replay::FoldCheckpoint* checkpoint, uint64_t limit,
                                                  uint64_t early, uint64_t early_bytes);
  // WriteFitted's search: the earliest cut after `early` whose index fits
  // `limit` (the end if none does).
  static uint64_t Thinned(const replay::LoadedView& t, const replay::RecordingFile::Identity& id,
                          const replay::FoldCheckpoint* checkpoint, uint64_t limit, uint64_t early);
  // Whether the replay is to pause now: a checkpoint or the memory is due.
  // Asked after each record, which it counts.
  bool CheckpointDue();
  bool CheckpointTime() const;
  // The replay is paused: writes the recording so far as TRACE.index if a
  // checkpoint is due; returns where to thin the state in memory (0: not).
  uint64_t AtPause(const replay::LoadedView& t);
  void WriteCheckpoint(const replay::LoadedView& t);
  // The peaks of Stats, from the index now; returns BoundedBytes().
  uint64_t NoteMemory(const index::TraceIndex& idx);
  // After a pause: the memory freed meanwhile given back to the system.
  void GiveBackFreed();
  // Where the state in memory is to be thinned now (0: nowhere new); the
  // pace the index grew at since the last look.
  uint64_t MemoryCut(const replay::LoadedView& t);
  // After the pause (thinned or not): when, in records read, the memory is
  // to be looked at again.
  void AfterPause(const index::TraceIndex& idx);
  // How far the bound may be passed at the pace measured: 1/16 of it.
  uint64_t Step() const { return std::max<uint64_t>(max_memory_bytes_ / 16, 1); }
  // The first look at the memory, in records read, and the least and the
  // most between two (a look pauses the replay: ~ms; the pace may change).
  static constexpr uint64_t kFirstLook = 1024;
  static constexpr uint64_t kMinRecordsBetweenLooks = 256;
  static constexpr uint64_t kMaxRecordsBetweenLooks = 1 << 16;
  static constexpr int kIdleWaitMs = 500;

  ChunkStore store_;
  DirWatch watch_;  // on store_'s directory
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
  uint64_t max_memory_bytes_;
  double last_checkpoint_ = -1;     // when the last checkpoint was written (-1: none yet)
  uint64_t pause_chunks_ = 0;       // chunks folded at the last pause
  uint64_t records_ = 0;            // records read (CheckpointDue)
  uint64_t pause_records_ = 0;      // records read at the last look at the memory
  uint64_t memory_due_at_;          // the records read at which the memory is due
  uint64_t memory_after_ = 0;       // BoundedBytes after the last pause
  double pace_ = 0;                 // BoundedBytes's growth a record (MemoryCut)
  uint64_t held_bytes_ = 0;         // what the calls the replay held at the last look will add
  uint64_t last_cut_ = 0;           // where Thinned last cut (0: never)
  bool trim_due_ = false;           // a pause freed memory since the last GiveBackFreed
  Stats stats_;
};

}  // namespace pageblame::recorder

#endif  // PAGEBLAME_RECORDER_CHUNK_FOLDER_H_

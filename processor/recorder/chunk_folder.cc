#include "processor/recorder/chunk_folder.h"

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "processor/base/status_macros.h"
#include "processor/index/index_codec.h"
#include "processor/index/index_thinning.h"
#include "processor/replay/recording_file.h"

namespace pageblame::recorder {
namespace {

double Now() {
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace

ChunkFolder::ChunkFolder(ChunkStore store, const std::string& trace, uint64_t max_index_bytes,
                         double checkpoint_every, uint64_t max_memory_bytes)
    : store_(std::move(store)),
      watch_(store_.dir_fd()),
      max_index_bytes_(max_index_bytes),
      result_(absl::UnknownError("not folded")),
      checkpoint_every_(checkpoint_every),
      max_memory_bytes_(max_memory_bytes),
      // The first look soon: from it on, the pace is known.
      memory_due_at_(max_memory_bytes > 0 ? kFirstLook : UINT64_MAX) {
  load_.path = trace;
  load_.symbols.trace_path = trace;
  load_.preload_symbols = false;
  load_.next_chunk = [this] { return NextChunk(); };
  load_.chunk_done = [this](const std::string& path) { ChunkDone(path); };
  if (checkpoint_every_ > 0 || max_memory_bytes_ > 0) {
    load_.checkpoint_due = [this] { return CheckpointDue(); };
    load_.checkpoint = [this](const replay::LoadedView& t) { return AtPause(t); };
    load_.after_checkpoint = [this](const index::TraceIndex& idx) { AfterPause(idx); };
  }
}

ChunkFolder::~ChunkFolder() {
  if (thread_.joinable()) {
    PerfEnded();
    thread_.join();
  }
  for (auto& [path, file] : open_) ::close(file.second);
}

void ChunkFolder::Start() {
  // The recorder reads SIGINT, SIGTERM and SIGUSR1 from a signalfd, having
  // blocked them in every thread (recorder/perf_run.h), but this thread is
  // made before that: made with every signal blocked, it and the replay's
  // threads it makes take none (a SIGTERM taken here killed the recorder:
  // no stop, no index).
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  thread_ = std::thread([this] {
    // Named (and so its replay thread, which inherits the name) for ps,
    // top and bench/fold.sh, which reads the folding's own CPU time by it.
    pthread_setname_np(pthread_self(), kThreadName);
    result_ = replay::LoadTrace(load_);
  });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

std::string ChunkFolder::IndexPath() const { return replay::RecordingFile::PathFor(load_.path, false); }

absl::Status ChunkFolder::Finish() {
  if (thread_.joinable()) thread_.join();
  if (!result_.ok()) return result_.status();
  NoteMemory((*result_)->index());
  replay::LoadOptions o;
  o.path = load_.path;
  o.folded = true;
  ASSIGN_OR_RETURN(replay::RecordingFile::Identity id, replay::RecordingFile::Identity::Of(o));
  ASSIGN_OR_RETURN(stats_.index_bytes, WriteFitted(replay::LoadedView::Of(**result_), id, nullptr));
  result_ = absl::UnknownError("written");  // the index's memory, given back
  NoteDisk();
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> ChunkFolder::WriteFitted(const replay::LoadedView& t, const replay::RecordingFile::Identity& id,
                                                  const replay::FoldCheckpoint* checkpoint) {
  const index::TraceStats& s = t.index->stats();
  // A checkpoint and the index it replaces are both on disk for a moment
  // (the rename): each checkpoint takes half the share.
  const uint64_t limit = checkpoint != nullptr ? max_index_bytes_ / 2 : max_index_bytes_;
  const bool bounded = limit > 0 && s.last_time > s.first_time;
  // Thinned before, the whole will not fit now (the index only grows): a
  // checkpoint starts at the last cut (it keeps at most what the earliest
  // cut would); the stop at the cut the memory was thinned at (what it
  // left out is gone).
  const uint64_t floor = checkpoint != nullptr ? last_cut_ : stats_.memory_cut;
  const uint64_t from = floor > s.first_time && floor < s.last_time ? floor : 0;
  // Thinned at `from` even when unbounded: the calls are those already, and
  // the stacks and strings only the calls thinned away named go too.
  uint64_t first_size = 0;
  ASSIGN_OR_RETURN(std::optional<uint64_t> bytes,
                   TryWrite(t, id, from, checkpoint, bounded ? limit : 0, &first_size));
  if (bytes.has_value()) {
    if (from != 0) stats_.thinned_before = from;
    return *bytes;
  }
  const uint64_t early = std::max(from, s.first_time);
  if (checkpoint != nullptr) {
    // Each encoding pauses the folding (and perf's chunks wait on disk
    // meanwhile): a cut guessed from counts first.
    ASSIGN_OR_RETURN(bytes, Guessed(t, id, checkpoint, limit, early, first_size));
    if (bytes.has_value()) return *bytes;
  }
  const uint64_t cut = Thinned(t, id, checkpoint, limit, early);
  stats_.thinned_before = cut;
  last_cut_ = cut;
  ASSIGN_OR_RETURN(bytes, TryWrite(t, id, cut, checkpoint, 0));
  return *bytes;
}

absl::StatusOr<std::optional<uint64_t>> ChunkFolder::TryWrite(const replay::LoadedView& t,
                                                              const replay::RecordingFile::Identity& id,
                                                              uint64_t cut, const replay::FoldCheckpoint* checkpoint,
                                                              uint64_t limit, uint64_t* size) {
  ASSIGN_OR_RETURN(std::unique_ptr<ChunkStore::IndexFile> f, store_.NewIndex(limit));
  const absl::Status written = replay::RecordingFile::Write(t, id, cut, checkpoint, f.get());
  if (size != nullptr) *size = f->written();  // counted on past the limit
  if (f->overflowed()) return std::optional<uint64_t>();  // dropped: the old index stays
  RETURN_IF_ERROR(written);
  RETURN_IF_ERROR(f->Commit());
  return std::optional<uint64_t>(f->written());
}

namespace {

// Keeps nothing, as CountingSink, where RecordingFile::Write wants a sink
// it can patch: a length of the index without its bytes.
class CountingPatchableSink : public PatchableSink {
 public:
  void Overwrite(uint64_t, std::string_view) override {}

 protected:
  void Take(std::string_view) override {}
};

}  // namespace

uint64_t ChunkFolder::Size(const replay::LoadedView& t, const replay::RecordingFile::Identity& id, uint64_t cut,
                           const replay::FoldCheckpoint* checkpoint) {
  CountingPatchableSink count;
  // Only zstd can fail here (memory): then counted as too large for any bound.
  if (!replay::RecordingFile::Write(t, id, cut, checkpoint, &count).ok()) return UINT64_MAX;
  return count.written();
}

absl::StatusOr<std::optional<uint64_t>> ChunkFolder::Guessed(const replay::LoadedView& t,
                                                             const replay::RecordingFile::Identity& id,
                                                             const replay::FoldCheckpoint* checkpoint, uint64_t limit,
                                                             uint64_t early, uint64_t early_bytes) {
  const index::TraceIndex& idx = *t.index;
  const uint64_t last = idx.stats().last_time;
  const uint64_t at_end = Size(t, id, last, checkpoint);
  const double k_early = static_cast<double>(index::IndexCodec::KeptByThinning(idx, early));
  const double k_end = static_cast<double>(index::IndexCodec::KeptByThinning(idx, last));
  if (at_end > limit || k_early <= k_end || early_bytes <= at_end) return std::optional<uint64_t>();
  // bytes = fixed + per * kept (calls and versions, with the stacks they
  // name; the mappings are the fixed part), through the two encodings; the
  // earliest cut whose count fits 95 % of the limit, by halving on counts
  // alone.
  const double per = static_cast<double>(early_bytes - at_end) / (k_early - k_end);
  const double fixed = static_cast<double>(at_end) - per * k_end;
  const double target = (0.95 * static_cast<double>(limit) - fixed) / per;
  uint64_t lo = early, hi = last;
  const uint64_t step = std::max<uint64_t>((last - idx.stats().first_time) / 4096, 1);
  while (hi - lo > step) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (static_cast<double>(index::IndexCodec::KeptByThinning(idx, mid)) <= target) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  ASSIGN_OR_RETURN(std::optional<uint64_t> bytes, TryWrite(t, id, hi, checkpoint, limit));
  if (bytes.has_value()) {
    stats_.thinned_before = hi;
    last_cut_ = hi;
  }
  return bytes;
}

uint64_t ChunkFolder::Thinned(const replay::LoadedView& t, const replay::RecordingFile::Identity& id,
                              const replay::FoldCheckpoint* checkpoint, uint64_t limit, uint64_t early) {
  const index::TraceStats& s = t.index->stats();
  // The bytes shrink as the cut moves later: the earliest cut after
  // `early` (which does not fit) that fits, by halving [too early, fits).
  uint64_t late = s.last_time;
  if (Size(t, id, late, checkpoint) > limit) return late;
  const uint64_t step = std::max<uint64_t>((s.last_time - s.first_time) / 4096, 1);
  while (late - early > step) {
    const uint64_t mid = early + (late - early) / 2;
    if (Size(t, id, mid, checkpoint) <= limit) {
      late = mid;
    } else {
      early = mid;
    }
  }
  return late;
}

bool ChunkFolder::CheckpointDue() {
  // Asked after every record: counted (the memory's pace is in bytes a
  // record); the clock only once a chunk more was folded.
  ++records_;
  return records_ >= memory_due_at_ || (stats_.chunks > pause_chunks_ && CheckpointTime());
}

bool ChunkFolder::CheckpointTime() const {
  return checkpoint_every_ > 0 && (last_checkpoint_ < 0 || Now() - last_checkpoint_ >= checkpoint_every_);
}

uint64_t ChunkFolder::AtPause(const replay::LoadedView& t) {
  if (stats_.chunks > pause_chunks_ && CheckpointTime()) {
    const double start = Now();
    WriteCheckpoint(t);
    last_checkpoint_ = Now();
    const double took = last_checkpoint_ - start;
    stats_.checkpoint_seconds += took;
    stats_.max_checkpoint_seconds = std::max(stats_.max_checkpoint_seconds, took);
    if (started_ >= 0) started_ += took;  // the chunk's folding time is its own
    NoteDisk();
  }
  // (Thinning in memory is folding work: its time counts in the chunk's.)
  const uint64_t cut = MemoryCut(t);
  pause_chunks_ = stats_.chunks;
  return cut;
}

uint64_t ChunkFolder::NoteMemory(const index::TraceIndex& idx) {
  // Between two looks the index only grows (the live maps aside): its
  // peak is what a look sees before it thins.
  const uint64_t now = idx.BoundedBytes();
  stats_.peak_memory = std::max(stats_.peak_memory, now);
  stats_.peak_index_memory = std::max<uint64_t>(stats_.peak_index_memory, idx.MemoryBytes());
  return now;
}

void ChunkFolder::GiveBackFreed() {
  // What a pause freed (a checkpoint's encoding, the thinning's renumbering:
  // MiBs each) stays in the folding thread's malloc arena, and the heap
  // walker's first read of libc's DWARF (~10 MiB) in its thread's: glibc
  // gives a thread arena's free pages back only when asked. ~13 MiB of the
  // recorder's resident memory (bench/HISTORY.md, "The recorder's memory
  // beyond the calls and versions"). Once per pause, on this thread.
  if (!trim_due_) return;
  trim_due_ = false;
  ::malloc_trim(0);
}

uint64_t ChunkFolder::MemoryCut(const replay::LoadedView& t) {
  const index::TraceIndex& idx = *t.index;
  // What the index takes now, and what the calls the replay holds will add
  // (a round's: they go into the index at its end, and their stacks are in
  // it already): a call and a version each.
  held_bytes_ = t.held_calls * (sizeof(index::CallRecord) + sizeof(index::Version));
  const uint64_t now = NoteMemory(idx) + held_bytes_;
  trim_due_ = true;
  ++stats_.memory_looks;
  // The pace since the last look: bytes a record read. perf's rounds make
  // it uneven (a round's calls come at once, and not all the held ones
  // are seen as held), so the pace is the fastest of the last looks',
  // decaying by 1/8 a look: a few looks more, fewer late ones.
  const uint64_t records = records_ - pause_records_;
  const double measured =
      records > 0 && now > memory_after_ ? static_cast<double>(now - memory_after_) / static_cast<double>(records) : 0;
  pace_ = std::max(measured, pace_ * 7 / 8);
  pause_records_ = records_;
  uint64_t cut = last_cut_;  // what the checkpoints no longer keep
  const index::TraceStats& s = idx.stats();
  // Within a step of the bound: thinned now (the next look could be past
  // it), to 3/4 of it (not again at every look), the held calls' room left.
  if (max_memory_bytes_ > 0 && now + Step() > max_memory_bytes_ && s.last_time > s.first_time) {
    const uint64_t target = max_memory_bytes_ / 4 * 3;
    const uint64_t from = std::max(stats_.memory_cut, s.first_time);
    static const std::vector<StackId> kNone;
    cut = std::max(cut, index::IndexThinning::EarliestCutWithin(idx, from, s.last_time,
                                                                target > held_bytes_ ? target - held_bytes_ : 0,
                                                                t.held_stacks != nullptr ? *t.held_stacks : kNone));
  }
  if (cut <= stats_.memory_cut || cut <= s.first_time) return 0;
  stats_.memory_cut = cut;
  ++stats_.memory_thinnings;
  last_cut_ = std::max(last_cut_, cut);  // a checkpoint after it cannot keep more
  return cut;
}

void ChunkFolder::AfterPause(const index::TraceIndex& idx) {
  if (max_memory_bytes_ == 0) return;
  memory_after_ = idx.BoundedBytes() + held_bytes_;
  // The next look once the index, at the pace measured, has taken half the
  // room left, a step at least, the room at most; so it is never more than
  // a step ahead of the bound at that pace (kMinRecordsBetweenLooks aside).
  const uint64_t room = max_memory_bytes_ > memory_after_ ? max_memory_bytes_ - memory_after_ : 0;
  const double grow = static_cast<double>(std::min(room, std::max(room / 2, Step())));
  const double records = pace_ > 0 ? grow / pace_ : static_cast<double>(kMaxRecordsBetweenLooks);
  memory_due_at_ = records_ + static_cast<uint64_t>(std::clamp(records, static_cast<double>(kMinRecordsBetweenLooks),
                                                               static_cast<double>(kMaxRecordsBetweenLooks)));
}

void ChunkFolder::WriteCheckpoint(const replay::LoadedView& t) {
  replay::LoadOptions o;
  o.path = load_.path;
  o.folded = true;
  absl::StatusOr<replay::RecordingFile::Identity> id = replay::RecordingFile::Identity::Of(o);
  struct timespec wall;
  ::clock_gettime(CLOCK_REALTIME, &wall);
  replay::FoldCheckpoint c;
  c.wall_ns = static_cast<uint64_t>(wall.tv_sec) * 1000000000 + static_cast<uint64_t>(wall.tv_nsec);
  c.chunks = stats_.chunks;
  c.last_chunk = last_done_;
  c.until = t.index->stats().last_time;
  absl::Status s = id.status();
  if (s.ok()) {
    const absl::StatusOr<uint64_t> bytes = WriteFitted(t, *id, &c);
    s = bytes.status();
    if (s.ok()) stats_.checkpoint_bytes = std::max(stats_.checkpoint_bytes, *bytes);
  }
  // Not written is no failure of the recording (a full disk): the next may be.
  if (!s.ok() && stats_.checkpoint_error.empty()) stats_.checkpoint_error = std::string(s.message());
  if (s.ok()) ++stats_.checkpoints;
}

void ChunkFolder::NoteDisk() { stats_.peak_disk = std::max(stats_.peak_disk, store_.DiskBytes()); }

absl::StatusOr<std::string> ChunkFolder::NextChunk() {
  GiveBackFreed();
  if (started_ >= 0) {
    const double took = Now() - started_;
    stats_.fold_seconds += took;
    stats_.max_fold_seconds = std::max(stats_.max_fold_seconds, took);
    started_ = -1;
  }
  while (true) {
    NoteDisk();
    // Read before listing: a chunk perf closes after the listing is for the next turn.
    const bool ended = perf_ended_;
    for (const std::string& name : store_.Closed()) {
      if (name <= last_name_) continue;  // handed out before (the names sort in time order)
      absl::StatusOr<int> fd = store_.Open(name);
      if (!fd.ok()) return fd.status();
      struct stat st;
      if (::fstat(*fd, &st) == 0) stats_.chunk_bytes += static_cast<uint64_t>(st.st_size);
      const std::string path = absl::StrCat("/proc/self/fd/", *fd);
      open_[path] = {name, *fd};
      last_name_ = name;
      started_ = Now();
      return path;
    }
    if (ended) return std::string();
    watch_.Wait(kIdleWaitMs);
  }
}

void ChunkFolder::ChunkDone(const std::string& path) {
  auto it = open_.find(path);
  if (it == open_.end()) return;
  ::close(it->second.second);
  // Not removed is no failure of the recording: it stays (and counts).
  if (store_.Remove(it->second.first).ok()) {
    ++stats_.chunks;
    last_done_ = it->second.first;
  }
  open_.erase(it);
}

}  // namespace pageblame::recorder

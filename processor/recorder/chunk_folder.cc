#include "processor/recorder/chunk_folder.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "processor/base/status_macros.h"
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
                         double checkpoint_every)
    : store_(std::move(store)),
      max_index_bytes_(max_index_bytes),
      result_(absl::UnknownError("not folded")),
      checkpoint_every_(checkpoint_every) {
  load_.path = trace;
  load_.symbols.trace_path = trace;
  load_.preload_symbols = false;
  load_.next_chunk = [this] { return NextChunk(); };
  load_.chunk_done = [this](const std::string& path) { ChunkDone(path); };
  if (checkpoint_every_ > 0) {
    load_.checkpoint_due = [this] { return CheckpointDue(); };
    load_.checkpoint = [this](const replay::LoadedView& t) { WriteCheckpoint(t); };
  }
}

ChunkFolder::~ChunkFolder() {
  if (thread_.joinable()) {
    perf_ended_ = true;
    thread_.join();
  }
  for (auto& [path, file] : open_) ::close(file.second);
}

void ChunkFolder::Start() {
  thread_ = std::thread([this] { result_ = replay::LoadTrace(load_); });
}

std::string ChunkFolder::IndexPath() const { return replay::RecordingFile::PathFor(load_.path, false); }

absl::Status ChunkFolder::Finish() {
  if (thread_.joinable()) thread_.join();
  if (!result_.ok()) return result_.status();
  replay::LoadOptions o;
  o.path = load_.path;
  o.folded = true;
  ASSIGN_OR_RETURN(replay::RecordingFile::Identity id, replay::RecordingFile::Identity::Of(o));
  const std::string bytes = Fitted(replay::LoadedView::Of(**result_), id, nullptr);
  RETURN_IF_ERROR(store_.WriteIndex(bytes));
  stats_.index_bytes = bytes.size();
  result_ = absl::UnknownError("written");  // the index's memory, given back
  NoteDisk();
  return absl::OkStatus();
}

std::string ChunkFolder::Fitted(const replay::LoadedView& t, const replay::RecordingFile::Identity& id,
                                const replay::FoldCheckpoint* checkpoint) {
  std::string bytes = replay::RecordingFile::Encode(t, id, 0, checkpoint);
  const index::TraceStats& s = t.index->stats();
  if (max_index_bytes_ == 0 || bytes.size() <= max_index_bytes_ || s.last_time <= s.first_time) return bytes;
  // The bytes shrink as the cut moves later: the earliest cut that fits,
  // by halving [too early, fits).
  uint64_t early = s.first_time, late = s.last_time;
  bytes = replay::RecordingFile::Encode(t, id, late, checkpoint);
  if (bytes.size() <= max_index_bytes_) {
    const uint64_t step = std::max<uint64_t>((s.last_time - s.first_time) / 4096, 1);
    while (late - early > step) {
      const uint64_t mid = early + (late - early) / 2;
      std::string b = replay::RecordingFile::Encode(t, id, mid, checkpoint);
      if (b.size() <= max_index_bytes_) {
        late = mid;
        bytes = std::move(b);
      } else {
        early = mid;
      }
    }
  }
  stats_.thinned_before = late;
  return bytes;
}

bool ChunkFolder::CheckpointDue() const {
  // Asked after every record: the clock only once a chunk more was folded.
  return stats_.chunks > checkpoint_chunks_ && (last_checkpoint_ < 0 || Now() - last_checkpoint_ >= checkpoint_every_);
}

void ChunkFolder::WriteCheckpoint(const replay::LoadedView& t) {
  const double start = Now();
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
    const std::string bytes = Fitted(t, *id, &c);
    s = store_.WriteIndex(bytes);
    if (s.ok()) stats_.checkpoint_bytes = std::max<uint64_t>(stats_.checkpoint_bytes, bytes.size());
  }
  // Not written is no failure of the recording (a full disk): the next may be.
  if (!s.ok() && stats_.checkpoint_error.empty()) stats_.checkpoint_error = std::string(s.message());
  if (s.ok()) ++stats_.checkpoints;
  last_checkpoint_ = Now();
  checkpoint_chunks_ = stats_.chunks;
  const double took = last_checkpoint_ - start;
  stats_.checkpoint_seconds += took;
  stats_.max_checkpoint_seconds = std::max(stats_.max_checkpoint_seconds, took);
  if (started_ >= 0) started_ += took;  // the chunk's folding time is its own
  NoteDisk();
}

void ChunkFolder::NoteDisk() { stats_.peak_disk = std::max(stats_.peak_disk, store_.DiskBytes()); }

absl::StatusOr<std::string> ChunkFolder::NextChunk() {
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
    ::usleep(50 * 1000);
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

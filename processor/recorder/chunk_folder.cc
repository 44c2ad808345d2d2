#include "processor/recorder/chunk_folder.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
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

ChunkFolder::ChunkFolder(ChunkStore store, const std::string& trace)
    : store_(std::move(store)), result_(absl::UnknownError("not folded")) {
  load_.path = trace;
  load_.symbols.trace_path = trace;
  load_.preload_symbols = false;
  load_.next_chunk = [this] { return NextChunk(); };
  load_.chunk_done = [this](const std::string& path) { ChunkDone(path); };
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
  RETURN_IF_ERROR(store_.WriteIndex(replay::RecordingFile::Encode(**result_, id)));
  result_ = absl::UnknownError("written");  // the index's memory, given back
  NoteDisk();
  return absl::OkStatus();
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
  if (store_.Remove(it->second.first).ok()) ++stats_.chunks;
  open_.erase(it);
}

}  // namespace pageblame::recorder

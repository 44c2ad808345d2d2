#include "processor/session/checkpoint_note.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "processor/base/format.h"
#include "processor/perf/chunk_files.h"
#include "processor/perf/perf_reader.h"
#include "processor/replay/recording_file.h"

namespace pageblame::session {
namespace {

std::string WallTime(uint64_t ns) {
  const time_t s = static_cast<time_t>(ns / 1000000000);
  struct tm tm;
  char buf[64];
  if (::gmtime_r(&s, &tm) == nullptr || ::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm) == 0) {
    return absl::StrCat(ns / 1000000000, " s after the epoch");
  }
  return buf;
}

bool IsRegular(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Whether the chunk files can be read alone, said once for all: with -z
// each continues the zstd stream of the chunks before it, folded and gone.
std::string Readability(const std::vector<std::string>& chunks) {
  std::string why;
  bool compressed = false;
  for (const std::string& c : chunks) {
    absl::StatusOr<std::unique_ptr<perf::PerfReader>> r = perf::PerfReader::Open(c);
    if (!r.ok()) {
      if (why.empty()) why = std::string(r.status().message());
      continue;
    }
    compressed |= (*r)->info().compressed;
  }
  if (compressed) {
    return "they cannot be read: perf -z compressed them as one zstd stream with the chunks folded before them, "
           "which are gone";
  }
  if (!why.empty()) return absl::StrCat("they cannot all be read: ", why);
  return absl::StrCat("each can be read alone as a trace of its own (pageblame maps -i ", chunks.front(),
                      "), without what came before it");
}

}  // namespace

bool IsCheckpointIndex(const std::string& index) {
  const int fd = ::open(index.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  std::string head(replay::RecordingFile::kHeaderBytes, '\0');
  struct stat st;
  const ssize_t n = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? ::read(fd, head.data(), head.size()) : -1;
  ::close(fd);
  if (n <= 0) return false;
  head.resize(static_cast<size_t>(n));
  const std::optional<replay::RecordingFile::Folded> f = replay::RecordingFile::PeekFolded(head);
  return f.has_value() && f->checkpoint.has_value();
}

std::vector<std::string> LeftAfterCheckpoint(const std::string& trace) {
  std::vector<std::string> out;
  if (IsRegular(trace)) out.push_back(trace);
  for (const std::string& c : perf::ChunkFiles::Of(trace)) out.push_back(c);
  return out;
}

std::string CheckpointWarning(const replay::FoldCheckpoint& c, const std::string& trace) {
  std::string out = absl::StrCat(
      "warning: the recording ended without a stop: the recorder stopped at the checkpoint of ", WallTime(c.wall_ns),
      " (trace time ", FormatTime(c.until), ", ", c.chunks, c.chunks == 1 ? " chunk" : " chunks", " folded",
      c.last_chunk.empty() ? "" : absl::StrCat(", the last ", c.last_chunk), "); the answers are the recording up to then (what it folded after that is lost)");
  const std::vector<std::string> chunks = LeftAfterCheckpoint(trace);
  if (chunks.empty()) {
    absl::StrAppend(&out, "; no chunk file after it is left");
  } else {
    std::vector<std::string> names;
    for (const std::string& f : chunks) names.push_back(BaseName(f));
    absl::StrAppend(&out, "; ", chunks.size(), chunks.size() == 1 ? " chunk file after it was" : " chunk files after it were",
                    " not folded: ", absl::StrJoin(names, ", "), " (", Readability(chunks), ")");
  }
  const std::string partial = trace + ".index.new";
  if (IsRegular(partial)) absl::StrAppend(&out, "; ", BaseName(partial), ", a checkpoint cut short when the recorder stopped, is ignored");
  return out;
}

}  // namespace pageblame::session

#include "plugin/recording_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "processor/base/status_macros.h"
#include "processor/perf/chunk_files.h"
#include "processor/perf/perf_reader.h"
#include "processor/replay/recording_file.h"

namespace pageblame::plugin {
namespace {

using perf::ChunkFiles;
using replay::RecordingFile;

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The first `n` bytes of a regular file ("" if it is none or cannot be read).
std::string Head(const std::string& path, size_t n) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "";
  std::string head(n, '\0');
  struct stat st;
  const ssize_t got = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? ::read(fd, head.data(), n) : -1;
  ::close(fd);
  head.resize(got > 0 ? static_cast<size_t>(got) : 0);
  return head;
}

// pageblame's index of a recording starts "PBINDEX" (replay/recording_file.h).
bool IsIndexFile(const std::string& path) { return absl::StartsWith(Head(path, 8), "PBINDEX"); }

// TRACE.index beside `trace` is a folded recording's (record --max-size):
// its final index or the checkpoint of a recorder still recording or killed.
bool FoldedIndexBeside(const std::string& trace) {
  return RecordingFile::PeekFolded(Head(RecordingFile::PathFor(trace, false), RecordingFile::kHeaderBytes))
      .has_value();
}

// TRACE for a chunk TRACE.<16 digits>, else "".
std::string TraceOfChunk(const std::string& path) {
  const std::string base = BaseName(path);
  const size_t suffix = 1 + ChunkFiles::kStampDigits;
  if (base.size() <= suffix) return "";
  const std::string name = base.substr(0, base.size() - suffix);
  if (!ChunkFiles::IsChunkOf(base, name)) return "";
  return path.substr(0, path.size() - suffix);
}

// Whether perf can read the chunk by itself: any chunk of an uncompressed
// recording, the first of a compressed one.
absl::Status CheckReadableAlone(const RecordingInput& in, const std::vector<std::string>& on_disk) {
  if (!in.folded && in.chunk == 1) return absl::OkStatus();
  absl::StatusOr<std::unique_ptr<perf::PerfReader>> r = perf::PerfReader::Open(in.perf_input);
  // Not readable at all: the load says why (naming file and offset).
  if (!r.ok() || !(*r)->info().compressed) return absl::OkStatus();
  const std::string& trace = in.recording;
  std::string out = absl::StrCat(
      in.perf_input, " is ", in.Describe(),
      ", which perf record -z compressed as one zstd stream across its chunks: this chunk continues the stream "
      "of the chunks before it, so perf cannot read it alone (it stops at its first COMPRESSED record: "
      "'failed to process type: 81'). Ask pageblame about the whole recording instead: pageblame query -i ",
      trace, " ADDR... (attribute, maps and growth too)");
  if (!in.folded && !on_disk.empty()) {
    absl::StrAppend(&out, "; perf script reads its first chunk alone (", on_disk.front(), ")");
  }
  return absl::FailedPreconditionError(out);
}

}  // namespace

std::string RecordingInput::Describe() const {
  const std::string& trace = recording;  // TRACE of the chunk
  const std::string where =
      chunk == 0 ? "the chunk perf is writing now"
                 : absl::StrCat("chunk ", chunk, " of the ", chunks, chunks == 1 ? " chunk" : " chunks", " on disk");
  return absl::StrCat(where, " of the recording ", trace,
                      folded ? absl::StrCat(" (the chunks before them were folded into ",
                                            RecordingFile::PathFor(trace, false), " and removed)")
                             : "");
}

absl::StatusOr<RecordingInput> RecordingInput::Of(const std::string& perf_input, const std::string& trace) {
  RecordingInput in;
  in.perf_input = perf_input;
  in.recording = trace.empty() ? perf_input : trace;
  if (IsIndexFile(in.recording)) {
    return absl::FailedPreconditionError(absl::StrCat(
        in.recording, " is pageblame's index of a recording, not a perf.data: perf script cannot read it; ask "
        "pageblame about the recording (pageblame query -i TRACE ADDR..., with TRACE the name before .index)"));
  }
  in.folded = FoldedIndexBeside(in.recording);
  if (perf_input == "-") return in;
  // No stamp, but a folded index beside it: the file perf writes now, while
  // `record --max-size` records into it.
  const bool writing = TraceOfChunk(perf_input).empty() && FoldedIndexBeside(perf_input);
  const std::string recording = writing ? perf_input : TraceOfChunk(perf_input);
  // Not a chunk, or --dlarg trace= names another recording than the one
  // perf's file is a chunk of: that recording, as it is.
  if (recording.empty() || (!trace.empty() && trace != recording)) return in;
  in.is_chunk = true;
  in.folded = FoldedIndexBeside(recording);
  const std::vector<std::string> on_disk = ChunkFiles::Of(recording);
  in.chunks = on_disk.size();
  for (size_t i = 0; i < on_disk.size() && !writing; ++i) {
    if (BaseName(on_disk[i]) == BaseName(perf_input)) in.chunk = i + 1;
  }
  in.recording = recording;
  RETURN_IF_ERROR(CheckReadableAlone(in, on_disk));
  return in;
}

SeenSpan::Where SeenSpan::Of(const index::CallEvent& ev) const {
  if (empty()) return Where::kInside;
  // The call's span as KeepSet has it (a call without enter times: its exit).
  const uint64_t first = ev.first_time != 0 ? std::min(ev.first_time, ev.time) : ev.time;
  const uint64_t last = std::max(ev.last_time, ev.time);
  if (last < first_) return Where::kBefore;
  if (first > last_) return Where::kAfter;
  return Where::kInside;
}

}  // namespace pageblame::plugin

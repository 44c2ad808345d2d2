// Where the file perf script reads sits in its recording: a trace of its
// own, or one chunk of a recording perf wrote in chunks (`perf record
// --switch-output`, as `pageblame record --max-size` runs it), so that the
// plugin answers from the whole recording, as `pageblame query -i TRACE`
// does, while perf prints the samples of the one chunk it reads.
//
//   ASSIGN_OR_RETURN(RecordingInput in, RecordingInput::Of("rec/t.data.2026112914111409", ""));
//   // in.recording == "rec/t.data" (session::Session::Open reads its chunks
//   // in order, or its folded index), in.chunk == 4, in.chunks == 4
//
// A chunk is TRACE.<16 digits> (perf/chunk_files.h), or TRACE itself while
// `record --max-size` records into it (a folded index beside it; perf 6.1
// refuses that file before any plugin starts: its header is written when
// perf closes it, but another perf may read it). What is refused,
// with a message saying what to run instead (never a silent answer from the
// chunk alone):
//   - a chunk after the first of a `perf record -z` recording: perf
//     compresses all the chunks as one zstd stream, so a later chunk's
//     COMPRESSED records continue the earlier chunk's and perf cannot read
//     it alone ("failed to process type: 81"); the same for any compressed
//     chunk of a folded recording (its first chunks are gone);
//   - pageblame's index of a recording (TRACE.index) given as the trace.
// perf itself refuses an index given to -i before any plugin starts
// ("incompatible file format"): docs/plugin.md says what to run.
#ifndef PAGEBLAME_PLUGIN_RECORDING_INPUT_H_
#define PAGEBLAME_PLUGIN_RECORDING_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "processor/index/timeline_types.h"

namespace pageblame::plugin {

struct RecordingInput {
  std::string perf_input;  // the file perf reads
  std::string recording;   // what the plugin loads (== perf_input for a trace of its own;
                           // for a chunk, TRACE)
  // For a chunk: its place among the chunks on disk (1-based; 0: the file
  // perf writes now, after them), how many there are, and whether the
  // recording is folded (TRACE.index holds the chunks folded and removed).
  size_t chunk = 0;
  size_t chunks = 0;
  bool is_chunk = false;
  bool folded = false;

  // `perf_input`: what perf reads ("-" for a pipe: left as it is);
  // `trace`: --dlarg trace=FILE, the recording to load instead ("" if none).
  static absl::StatusOr<RecordingInput> Of(const std::string& perf_input, const std::string& trace);

  // "chunk 4 of 4 of the recording rec/t.data" (only for a chunk).
  std::string Describe() const;
};

// The times of the samples perf handed the plugin (all of them, before any
// filter), so that the calls of the recording whose samples perf did not
// print are told apart: in the chunk it read, or in an earlier or a later one.
class SeenSpan {
 public:
  void Add(uint64_t time) {
    if (time < first_) first_ = time;
    if (time > last_) last_ = time;
  }
  bool empty() const { return first_ > last_; }
  enum class Where { kBefore, kInside, kAfter };
  // Where a call lies: before the first sample seen, after the last, or
  // between (perf read its samples). With no sample seen: kInside.
  Where Of(const index::CallEvent& ev) const;

 private:
  uint64_t first_ = UINT64_MAX;
  uint64_t last_ = 0;
};

}  // namespace pageblame::plugin

#endif  // PAGEBLAME_PLUGIN_RECORDING_INPUT_H_

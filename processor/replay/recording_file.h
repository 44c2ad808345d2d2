// RecordingFile: a replayed recording kept beside its trace (TRACE.index),
// so that every later command on it loads the address timeline instead of
// reading, decompressing, unwinding and replaying the trace again.
//
//   const std::string index = RecordingFile::PathFor("app.data", false);   // "app.data.index"
//   ASSIGN_OR_RETURN(RecordingFile::Identity id, RecordingFile::Identity::Of(load_options));
//   ASSIGN_OR_RETURN(std::unique_ptr<AtomicFile> out, AtomicFile::Create(index, 0600));
//   RETURN_IF_ERROR(RecordingFile::Write(LoadedView::Of(*loaded), id, 0, nullptr, out.get()));
//   RETURN_IF_ERROR(out->Commit());                                  // after a replay
//   absl::StatusOr<std::unique_ptr<LoadedTrace>> again =
//       RecordingFile::Decode(*input_file, index, id, symbolizer_options); // a later command
//
// What it keeps is what the replay made, whole: the index (index_codec.h),
// the trace's code mappings (for symbols, looked up lazily as before), what
// the file said that answers use (arch, command line, clocks), which events
// each syscall was replayed from, the load's format warnings and unwinding
// counters. Answers from it are byte for byte those of a replay.
//
// It is used only while it matches its inputs, else it is stale and the
// trace is replayed again (never a wrong answer):
//   - made by the same replay code: kReplayVersion, a hash of the sources of
//     every stage up to the index (cmake/replay_version.cmake);
//   - of the same trace: its size, modification time and a hash of its
//     first and last bytes; with the same load options (-f, the plugin's)
//     and the same TRACE.attach-maps (size, modification time);
//   - with the same binaries: every lookup the unwinder made for a DSO's
//     files (symbols/dso_lookup.h) finds the same files, unchanged, with
//     today's --symfs, --buildid-dir and -f.
// Its format: "PBINDEX\1", u32 format version, the identity, whether it is
// a checkpoint of a recording still under way (FoldCheckpoint), then one zstd
// frame of the rest; every count and id is checked as it is read
// (DataLoss naming what is wrong); fuzzed (tests/fuzz).
// Memory: written and read a piece at a time (the frame compressed as the
// tables are encoded, decompressed as they are read), so either way it
// takes the tables and a few MiB, never the file's body whole.
#ifndef PAGEBLAME_REPLAY_RECORDING_FILE_H_
#define PAGEBLAME_REPLAY_RECORDING_FILE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "processor/base/byte_sink.h"
#include "processor/base/input_file.h"
#include "processor/base/stream_reader.h"
#include "processor/replay/trace_loader.h"
#include "processor/symbols/dso_lookup.h"
#include "processor/symbols/symbolizer.h"

namespace pageblame::replay {

class RecordingFile {
 public:
  // 2: the index's counters say what thinning left out (TraceStats::thinned_*).
  // 3: the header says whether it is a checkpoint (FoldCheckpoint).
  // 4: stacks as the stack table's prefix tree (frames, then ids).
  static constexpr uint32_t kFormatVersion = 4;
  // Identity::options bits.
  // kFolded: the index of a recording the recorder folded chunk by chunk
  // (record --max-size), whose raw chunks are gone: there is no trace to
  // compare it with (size, time and hash are 0), nor to replay again.
  static constexpr uint8_t kRawDuplicateTimes = 1, kForce = 2, kAttachMaps = 4, kFolded = 8;

  struct Identity {
    uint64_t size = 0;
    uint64_t mtime_ns = 0;
    uint64_t sample_hash = 0;  // of the trace's first and last 64 KiB
    uint8_t options = 0;              // the load options that change a replay: kRawDuplicateTimes...
    symbols::FileStamp attach_maps;   // TRACE.attach-maps (none: zero)
    // The identity of the trace at `o.path` now, loaded with `o`
    // (Unavailable if it cannot be read; a pipe has none).
    static absl::StatusOr<Identity> Of(const LoadOptions& o);
  };

  // TRACE.index; TRACE.plugin.index for the plugin's load (raw duplicates'
  // times kept), so the two never replace each other's.
  static std::string PathFor(const std::string& trace, bool raw_duplicate_times);

  // With `thin_cutoff` (record --max-size): the index thinned at it
  // (IndexCodec::EncodeThinned), the rest as it is.
  static std::string Encode(const LoadedTrace& trace, const Identity& id, uint64_t thin_cutoff = 0);
  // The same of a load's parts; with `checkpoint` (record --max-size while
  // it records), the header says how far the recording got: Decode's trace
  // then carries it (LoadedTrace::checkpoint()).
  static std::string Encode(const LoadedView& trace, const Identity& id, uint64_t thin_cutoff,
                            const FoldCheckpoint* checkpoint);
  // The same into `out` a piece at a time (a file: AtomicFile), the one
  // field of the header that waits for the frame's size written last; the
  // index is encoded twice (its length comes first), never held whole.
  // The error of zstd or of `out` (a full disk).
  static absl::Status Write(const LoadedView& trace, const Identity& id, uint64_t thin_cutoff,
                            const FoldCheckpoint* checkpoint, PatchableSink* out);
  // The recording kept in `bytes` (read from `name`). FailedPrecondition
  // saying why when it is stale (another build, another trace, other load
  // options, a binary that changed); DataLoss when it is damaged.
  static absl::StatusOr<std::unique_ptr<LoadedTrace>> Decode(std::string_view bytes, const std::string& name,
                                                             const Identity& expected,
                                                             const symbols::SymbolizerOptions& symbols);
  // The same read from `file` (a regular file, from its start) a piece at a time.
  static absl::StatusOr<std::unique_ptr<LoadedTrace>> Decode(const InputFile& file, const std::string& name,
                                                             const Identity& expected,
                                                             const symbols::SymbolizerOptions& symbols);
  // What the start of an index file (its first kHeaderBytes or fewer) says
  // of a folded recording: nullopt if it is not one's (another kind of
  // index, another format, not an index); else whether it is a checkpoint.
  // Only to choose how a recording is read: Decode checks the whole file.
  struct Folded {
    std::optional<FoldCheckpoint> checkpoint;
  };
  static constexpr size_t kHeaderBytes = 4096;
  static std::optional<Folded> PeekFolded(std::string_view head);
  // The part after the header and its zstd frame, decompressed: what Decode
  // reads once the file is known current (tests/fuzz feeds it directly).
  static absl::StatusOr<std::unique_ptr<LoadedTrace>> DecodeBody(std::string_view body, const std::string& name,
                                                                 const symbols::SymbolizerOptions& symbols);
  // The same from `body` to its end, a piece at a time.
  static absl::StatusOr<std::unique_ptr<LoadedTrace>> DecodeBody(StreamReader* body, const std::string& name,
                                                                 const symbols::SymbolizerOptions& symbols);
};

}  // namespace pageblame::replay

#endif  // PAGEBLAME_REPLAY_RECORDING_FILE_H_

// Loads a perf.data file into the address-timeline index: reader -> decode ->
// time ordering -> replay -> index. One pass over the file; memory holds the
// index (live regions, versions, unique stacks, changes), never the samples.
//
//   LoadOptions opts;  opts.path = "trace.data";
//   ASSIGN_OR_RETURN(std::unique_ptr<LoadedTrace> t, LoadTrace(opts));
//   const index::TraceIndex& idx = t->index();
//
// Errors are one line that says what is wrong and what to record instead
// (missing file, not a perf file, truncated, no syscall events, no call chains).
#ifndef PAGEBLAME_REPLAY_TRACE_LOADER_H_
#define PAGEBLAME_REPLAY_TRACE_LOADER_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "processor/index/trace_index.h"
#include "processor/perf/perf_records.h"
#include "processor/symbols/dso_lookup.h"
#include "processor/symbols/symbolizer.h"
#include "processor/unwind/unwind_stats.h"

namespace pageblame::replay {

struct LoadedView;

struct LoadOptions {
  std::string path;  // "-" = stdin (pipe mode)
  // A recording in chunks (perf --switch-output, perf/chunk_files.h): these
  // files, in this order, are read as one trace; `path` (TRACE, which need
  // not exist) names the recording: its index and side files are beside it.
  std::vector<std::string> chunks;
  // Or chunks handed over one by one as perf closes them (the recorder's
  // folding, recorder/chunk_folder.h): the next chunk's path, "" after the
  // last (may block); `chunk_done` is told each chunk read to its end. Read
  // in perf's round order only (the lane order may need a second pass).
  std::function<absl::StatusOr<std::string>()> next_chunk;
  std::function<void(const std::string&)> chunk_done;
  // With next_chunk: the recorder's checkpoints (recorder/chunk_folder.h).
  // After each record `checkpoint_due` is asked (it must be cheap); when it
  // says yes, the replay thread is paused once it has replayed every event
  // perf's round order lets go so far, and `checkpoint` is given the
  // recording as it is then: a prefix in time (valid during the call only:
  // the replay waits for it to return). Perf's round order only (a chunk
  // chain is read so). It returns a time at which the replay's state is
  // then thinned in memory (TraceIndex::ThinBefore, and the stack table to
  // what is still named: load_pass.h ThinStacks; the recorder's memory
  // bound), or 0 to keep it all.
  std::function<bool()> checkpoint_due;
  std::function<uint64_t(const LoadedView&)> checkpoint;
  // With checkpoint: told the index as each checkpoint left it (thinned,
  // stacks too, if it said so), the replay still paused. (The recorder
  // measures what its memory bound bounds after the thinning.)
  std::function<void(const index::TraceIndex&)> after_checkpoint;
  // No trace and no chunks: the recording is its index alone (the recorder
  // folded every chunk into it and removed them; RecordingFile::kFolded).
  bool folded = false;
  symbols::SymbolizerOptions symbols;
  bool progress = false;  // print progress to stderr for long files
  // Read the raw_syscalls duplicates of syscalls:* events to widen each call's
  // [first_time, last_time] to every sample perf recorded for it (the
  // dlfilter plugin needs this to keep all of a call's samples). Off, those
  // raw duplicates are skipped unparsed: the replay and every answer are the same.
  bool raw_duplicate_times = false;
  // Time order by perf's round rule only (EventSorter), never by CPU lanes
  // (LaneSorter, which gives the same order sooner; see lane_sorter.h). For
  // tests and A/B runs; answers are the same either way.
  bool perf_rounds_only = false;
  // While the replay thread finishes, load the symbol tables of the DSOs
  // holding the trace's stack frames (Symbolizer::Preload), so that printing
  // stacks does not start by reading ELF files. Off for callers that print
  // no stacks.
  bool preload_symbols = true;
  // Time the unwinding of --call-graph dwarf stacks (UnwindStats::nanos;
  // two clock reads per sample), for -v.
  bool time_unwinding = false;
  // Take the kernel's table of mappings read at the attach, TRACE.attach-maps
  // beside a regular trace file (attach_maps.h), as the truth at its moment.
  bool attach_maps = true;
};

// What became of TRACE.attach-maps (attach_reconciler.h).
struct AttachMapsUse {
  std::string path;     // the file used, "" if none
  std::string warning;  // why one beside the trace was not used, "" if none
  uint64_t added_pages = 0, removed_pages = 0, mismatched_pages = 0;
};

// How far a folded recording's index goes when the recorder wrote it while
// it recorded (record --max-size's checkpoints, recorder/chunk_folder.h)
// and never replaced it at a stop: it was killed, or is still recording.
struct FoldCheckpoint {
  uint64_t wall_ns = 0;     // when it was written, CLOCK_REALTIME
  uint64_t chunks = 0;      // perf's chunks folded into it
  std::string last_chunk;   // the last of them, e.g. "t.data.2026112905101234"
  uint64_t until = 0;       // the trace time of the last event replayed into it
};

class LoadedTrace {
 public:
  LoadedTrace(std::unique_ptr<index::TraceIndex> idx, std::unique_ptr<symbols::Symbolizer> sym,
              perf::FileInfo info, std::string sources)
      : index_(std::move(idx)), symbolizer_(std::move(sym)), info_(std::move(info)),
        sources_(std::move(sources)) {}
  const index::TraceIndex& index() const { return *index_; }
  symbols::Symbolizer& symbolizer() const { return *symbolizer_; }
  const perf::FileInfo& info() const { return info_; }
  // Which events each syscall was replayed from.
  const std::string& sources() const { return sources_; }
  // What unwinding the enters' user stack copies did; null if the trace has
  // none (frame-pointer call chains, or no stacks).
  const unwind::UnwindStats* unwind_stats() const {
    return unwind_stats_ ? &*unwind_stats_ : nullptr;
  }
  void set_unwind_stats(const unwind::UnwindStats& s) { unwind_stats_ = s; }
  // Events recorded in a layout replay cannot read, whose calls are
  // therefore not replayed (SyscallDecoder::FormatWarnings).
  const std::vector<std::string>& format_warnings() const { return format_warnings_; }
  void set_format_warnings(std::vector<std::string> w) { format_warnings_ = std::move(w); }
  // Every lookup the unwinder made for a DSO's files: what the stacks
  // depend on (the recording's index is stale when one finds other files).
  const std::vector<symbols::DsoLookup>& dso_lookups() const { return dso_lookups_; }
  void set_dso_lookups(std::vector<symbols::DsoLookup> l) { dso_lookups_ = std::move(l); }
  // The table of mappings at the attach the replay was reconciled with.
  const AttachMapsUse& attach_maps() const { return attach_maps_; }
  void set_attach_maps(AttachMapsUse u) { attach_maps_ = std::move(u); }
  // A folded recording's binaries (perf maps and jitdumps included) that
  // changed since the recorder read them: its index is used as it is (there
  // is no trace to replay again), its stacks as they were unwound then; each
  // says what changed, for a warning (RecordingFile).
  const std::vector<std::string>& changed_binaries() const { return changed_binaries_; }
  void set_changed_binaries(std::vector<std::string> c) { changed_binaries_ = std::move(c); }
  // A folded recording made by another build of pageblame: which
  // ("pageblame 0.4.0 (git 20308c8)"), for a warning; empty when this build
  // made it, or the trace was replayed.
  const std::string& made_by() const { return made_by_; }
  void set_made_by(std::string m) { made_by_ = std::move(m); }
  // Set when the trace is a folded recording's checkpoint (not its final index).
  const std::optional<FoldCheckpoint>& checkpoint() const { return checkpoint_; }
  void set_checkpoint(FoldCheckpoint c) { checkpoint_ = std::move(c); }

 private:
  std::unique_ptr<index::TraceIndex> index_;
  std::unique_ptr<symbols::Symbolizer> symbolizer_;
  perf::FileInfo info_;
  std::string sources_;
  std::optional<unwind::UnwindStats> unwind_stats_;
  std::vector<std::string> format_warnings_;
  std::vector<symbols::DsoLookup> dso_lookups_;
  AttachMapsUse attach_maps_;
  std::optional<FoldCheckpoint> checkpoint_;
  std::vector<std::string> changed_binaries_;
  std::string made_by_;
};

// The parts of a replayed recording that its index file keeps
// (replay/recording_file.h): those of a LoadedTrace, or of a load still
// under way (LoadOptions::checkpoint). Borrowed, never owned.
// What thinning the stack table in memory did so far (LoadPass: at each
// checkpoint that thinned the index, the stacks no holder names go), for
// the recorder's summary and the tests. Counts over every thinning.
struct StackThinningStats {
  uint64_t thinnings = 0;
  uint64_t dropped = 0;  // stacks left out
  uint64_t kept = 0;     // stacks kept (each counted at each thinning)
  // Of those kept, the stacks no call of the index named: named only by
  // events the replay held (the sorter's, threads' enters waiting for their
  // exit), or reserved for samples whose unwinding still waited.
  uint64_t held = 0;
  uint64_t waiting = 0;
};

struct LoadedView {
  const index::TraceIndex* index = nullptr;
  const perf::FileInfo* info = nullptr;
  const std::string* sources = nullptr;
  const std::vector<std::string>* format_warnings = nullptr;
  const unwind::UnwindStats* unwind = nullptr;  // null: none
  const symbols::MappingHistory* mappings = nullptr;
  const std::vector<symbols::DsoLookup>* dso_lookups = nullptr;
  const AttachMapsUse* attach_maps = nullptr;
  const StackThinningStats* stack_thinning = nullptr;  // null: not a checkpoint's
  // A checkpoint's (null otherwise): what the replay holds that is not in
  // the index yet, for the recorder's memory bound. The stack ids its held
  // events (the round sorter's, enters waiting for their exit) and the
  // samples waiting to be unwound name, which a thinning keeps besides
  // those of the index's calls (ThinStacks); and how many of those events
  // may still become calls.
  const std::vector<StackId>* held_stacks = nullptr;
  uint64_t held_calls = 0;
  static LoadedView Of(const LoadedTrace& t);
};

absl::StatusOr<std::unique_ptr<LoadedTrace>> LoadTrace(const LoadOptions& options);

}  // namespace pageblame::replay

#endif  // PAGEBLAME_REPLAY_TRACE_LOADER_H_

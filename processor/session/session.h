// Session: one loaded recording and everything found beside it, built the
// same way by every front end (the CLI's commands and the dlfilter plugin)
// from one SessionOptions. It owns the replayed trace (its index, symbolizer
// and the stacks symbolized from them), its path, its side files (perf maps
// and jitdumps through the symbolizer, residency snapshots, saved runtime
// tables), and what the load warns about, as data. Analyses take what they
// need from it (the index, the frames, the residency snapshots, a
// Selection); renderers take results and the frames to print stacks with.
// Nothing above session/ includes replay/.
//
//   SessionOptions o;  o.path = "app.data";  o.residency.required = true;
//   ASSIGN_OR_RETURN(std::unique_ptr<Session> s, Session::Open(o));
//   for (const std::string& w : s->warnings()) say(w);
//   ASSIGN_OR_RETURN(Selection sel, Resolve({pid, at}, *s, PeakOf::kMapped));
// A second command on a trace loads the index the first wrote beside it
// (TRACE.index) instead of replaying, while it matches the trace.
//   analysis::Attribute(s->index(), regions, {.rss = s->residency(), ...});
//
// Errors are those of the load (replay/trace_loader.h: a file that is not a
// trace, truncated, without syscall events) and of a residency file the
// answer needs (session/residency_load.h); a broken one it does not need is
// a warning.
#ifndef PAGEBLAME_SESSION_SESSION_H_
#define PAGEBLAME_SESSION_SESSION_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "processor/index/trace_index.h"
#include "processor/perf/perf_records.h"
#include "processor/heap/heap_index.h"
#include "processor/residency/residency_index.h"
#include "processor/session/heap_load.h"
#include "processor/session/residency_load.h"
#include "processor/session/stack_frames.h"
#include "processor/symbols/symbolizer.h"
#include "processor/unwind/unwind_stats.h"

namespace pageblame::replay {
class LoadedTrace;  // replay/trace_loader.h: what a replay leaves, owned here
}  // namespace pageblame::replay

namespace pageblame::session {

// The trace a command reads when none is named (perf's default too).
inline constexpr char kDefaultTracePath[] = "perf.data";

struct SessionOptions {
  std::string path = kDefaultTracePath;  // "-": standard input (pipe mode)
  // Where symbols, perf maps and jitdumps are looked for (trace_path is
  // set from `path`).
  symbols::SymbolizerOptions symbols;
  // -f/--force: side files another user could have written are used
  // anyway (base/side_file_trust.h): perf maps, jitdumps, binaries,
  // residency snapshots, saved runtime tables.
  bool force = false;
  ResidencyRequest residency;  // --rss FILE, --no-rss, required (force: above)
  HeapRequest heap;            // TRACE.heap (session/heap_load.h; force: above)
  bool progress = false;        // the load's progress line on stderr
  bool time_unwinding = false;  // -v's unwinding time
  // Symbol tables read ahead while replaying (off for callers that print
  // no stacks); raw_syscalls duplicates' times kept (the plugin).
  bool preload_symbols = true;
  bool raw_duplicate_times = false;
  // The recording's index beside the trace (replay/recording_file.h): used
  // when it matches the trace (else the trace is replayed), and written
  // after a replay (`write_index`); the plugin's is TRACE.plugin.index
  // (RecordingFile::PathFor). --no-index: neither.
  bool use_index = true;
  bool write_index = true;
};

class Session {
 public:
  static absl::StatusOr<std::unique_ptr<Session>> Open(const SessionOptions& options);
  // A session over a trace already replayed (tests, tools that replay by
  // hand); its side files are looked for as Open does.
  static absl::StatusOr<std::unique_ptr<Session>> Of(std::unique_ptr<replay::LoadedTrace> trace,
                                                     const SessionOptions& options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::string& path() const { return options_.path; }
  bool force() const { return options_.force; }

  // The replayed recording.
  const index::TraceIndex& index() const;
  symbols::Symbolizer& symbolizer() const;
  // Its stacks, symbolized once for every analysis and renderer.
  StackFrames& frames() const { return *frames_; }
  const perf::FileInfo& info() const;
  // Which events each syscall was replayed from.
  const std::string& sources() const;
  const unwind::UnwindStats* unwind_stats() const;

  // The residency snapshots beside the trace (or named), null if none.
  const residency::ResidencyIndex* residency() const { return residency_.get(); }
  // The last moment the recording is known to have reached beyond its memory
  // calls: its last residency or heap snapshot (0: none). `--at` may name any
  // time up to it (the state after the last call, the snapshots' figures).
  uint64_t Reached() const;
  // The heap snapshots beside the trace (TRACE.heap), null if none.
  const heap::HeapIndex* heap() const { return heap_.get(); }
  // What side files are checked against: the trace's clock, span, pids.
  residency::TraceFacts Facts() const { return FactsOf(index(), info(), options_.path); }

  // What answers from this recording cannot be trusted for (lost events,
  // unparsable records, stacks cut in libc, a residency file not used),
  // each a line "warning: ..." or "note: ...", to say once before the
  // answer (session/load_warnings.h).
  const std::vector<std::string>& warnings() const { return warnings_; }
  // How the recording was loaded, for -v: "loaded from TRACE.index",
  // "replayed; TRACE.index written", or why the index was not used.
  const std::string& load_note() const { return load_note_; }
  // What became of TRACE.index: loaded from it, written after the replay,
  // or neither (none wanted, a pipe, or it could not be written: load_note).
  enum class IndexUse { kNone, kLoaded, kWritten };
  IndexUse index_use() const { return index_use_; }
  // For -v: what the kernel's table of the mappings at the attach
  // (TRACE.attach-maps) changed in the replay, escaped; "" if none was used.
  std::string AttachMapsNote() const;

 private:
  Session(std::unique_ptr<replay::LoadedTrace> trace, SessionOptions options);
  absl::Status LoadSideFiles();

  SessionOptions options_;
  std::unique_ptr<replay::LoadedTrace> trace_;
  std::unique_ptr<StackFrames> frames_;
  std::unique_ptr<residency::ResidencyIndex> residency_;
  std::unique_ptr<heap::HeapIndex> heap_;
  std::vector<std::string> warnings_;
  std::string load_note_;
  IndexUse index_use_ = IndexUse::kNone;
};

}  // namespace pageblame::session

#endif  // PAGEBLAME_SESSION_SESSION_H_

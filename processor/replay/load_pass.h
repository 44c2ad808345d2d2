// One pass of the loader over a trace file: reads and parses each record
// (one handler per record kind) and hands it on: samples of memory syscalls
// to the replay thread (ReplayWorker) itself, every other record to each
// sink (record_sink.h): the replay's events (ReplayFeed) and the trace's
// one mapping history (MappingHistorySink). The index is complete when
// Finish() returns. Samples of memory syscalls get their user stack interned here, on
// the reading thread: the callchain's user ips for frame-pointer traces, the
// unwound REGS_USER + STACK_USER copy for --call-graph dwarf ones
// (unwind/unwinder.h, fed with the trace's executable mappings, forks and
// execs). Only the interned StackId travels on.
//
//   LoadPass pass(options, ReplayWorker::Ordering::kLanes);
//   RETURN_IF_ERROR(pass.Open());
//   ASSIGN_OR_RETURN(std::unique_ptr<LoadedTrace> t, pass.Run());   // null: diverged
//
// A record kind replay has a use for is one more handler (On*), one case in
// Run() and one RecordSink method; the handlers share the pass's state
// (decoder, raw duplicates, counters).
#ifndef PAGEBLAME_REPLAY_LOAD_PASS_H_
#define PAGEBLAME_REPLAY_LOAD_PASS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "processor/decode/syscall_decoder.h"
#include "processor/decode/tracing_data.h"
#include "processor/index/trace_index.h"
#include "processor/perf/perf_reader.h"
#include "processor/replay/attach_reconciler.h"
#include "processor/replay/mapping_history_sink.h"
#include "processor/replay/record_sink.h"
#include "processor/replay/replay_feed.h"
#include "processor/replay/replay_worker.h"
#include "processor/replay/stack_interner.h"
#include "processor/replay/unparsed_tracker.h"
#include "processor/replay/trace_loader.h"
#include "processor/symbols/mapping_history.h"
#include "processor/symbols/preload_plan.h"
#include "processor/symbols/symbolizer.h"
#include "processor/unwind/unwinder.h"

namespace pageblame::replay {

class LoadPass {
 public:
  LoadPass(const LoadOptions& options, ReplayWorker::Ordering ordering);
  ~LoadPass();

  // Opens the file and checks that it can be replayed (tracepoint formats,
  // memory syscall events, call chains or stack copies on the enters).
  absl::Status Open();
  // Reads every record; the loaded trace, or null if the trace broke the
  // lane order's rule (load again with Ordering::kRounds).
  absl::StatusOr<std::unique_ptr<LoadedTrace>> Run();

 private:
  // The handlers, one per record kind; a record that does not parse is
  // counted (BadSample, BadRecord) with where it was (unparsed_).
  void OnSample(const perf::RawRecord& rec);
  // StackInterner's Reread: the sample of a record read before, from the
  // file again (file mode only).
  bool ReadSampleAgain(const perf::RawRecord& seen, perf::Sample* out);
  void OnComm(const perf::RawRecord& rec);
  void OnTask(const perf::RawRecord& rec);  // FORK and EXIT
  void OnMmap(const perf::RawRecord& rec);  // MMAP and MMAP2
  void OnLost(const perf::RawRecord& rec);  // LOST and LOST_SAMPLES
  // A memory syscall's raw_syscalls duplicate (raw_duplicate_times only).
  void OnRawDuplicate(const perf::Sample& s, const decode::DecodedSyscall& d, uint32_t cpu);
  void BadSample(const absl::Status& why);
  void BadRecord(const absl::Status& why);  // COMM, FORK, EXIT, MMAP, LOST
  void Progress();
  // The kernel's table at the attach beside the trace (attach_maps.h): the
  // reconciler, or nothing (none there; or not this trace's: attach_use_'s
  // warning says why).
  void LoadAttachMaps(const perf::FileInfo& info);
  // What the pass counted, into the index's stats, and the LoadedTrace.
  std::unique_ptr<LoadedTrace> Finish();
  // Finish's steps that a checkpoint takes too: the counters into the
  // index's stats (the unparsed spans copied, not moved, when `copy`),
  // waited stacks' aliases applied, the files the replay read.
  void CountersIntoStats(bool copy);
  void ApplyStackAliases();
  std::vector<symbols::DsoLookup> Lookups() const;
  std::optional<unwind::UnwindStats> UnwindStatsNow() const;
  // LoadOptions::checkpoint, with the replay thread paused.
  void Checkpoint();
  // Paused, the index thinned: the stack table thinned to the stacks still
  // named (StackTable::Thin) and every holder of a stack id renumbered:
  // the index's calls, the events the replay holds (the sorter's, the
  // threads' waiting enters) and the interner's waiting samples, their
  // aliases applied first. So the recorder's stacks are bounded by the
  // calls it keeps, not by every stack it met.
  void ThinStacks();

  const LoadOptions& options_;
  ReplayWorker::Ordering ordering_;
  std::unique_ptr<perf::PerfReader> reader_;
  std::unique_ptr<decode::TracingData> tracing_data_;
  std::optional<decode::SyscallDecoder> decoder_;
  std::unique_ptr<index::TraceIndex> idx_;
  // The trace's one mapping history, filled here in file order; read by
  // the unwinder (on this thread), the preload plan and, after the pass,
  // the symbolizer.
  std::shared_ptr<symbols::MappingHistory> mappings_;
  std::unique_ptr<symbols::Symbolizer> sym_;
  std::unique_ptr<AttachReconciler> attach_;
  AttachMapsUse attach_use_;
  std::unique_ptr<ReplayWorker> worker_;
  std::unique_ptr<ReplayFeed> replay_feed_;
  std::unique_ptr<MappingHistorySink> history_sink_;
  std::vector<RecordSink*> sinks_;  // in the order each record is handed on
  // For traces whose enters carry user stack copies (--call-graph dwarf).
  std::unique_ptr<unwind::Unwinder> unwinder_;
  std::unique_ptr<StackInterner> stacks_;
  // An enter and its exit travel as one kCall event when nothing comes
  // between them (ReplayWorker::JoinExit, lanes only): half the events to
  // hold while a round's first CPU part waits for the rest (the bench
  // trace's biggest holds 357 k samples), and half the keys to sort. Not
  // with raw duplicate times: an exit may carry a raw duplicate's time, which a kCall has no
  // room for.
  bool join_calls_ = false;
  bool checkpoints_ = false;  // LoadOptions::checkpoint, asked after each record
  StackThinningStats stack_thinning_;  // ThinStacks's
  bool progress_ = false;
  uint64_t next_progress_ = 64 << 20;

  // The loader's counters, kept apart from the index's stats until the end:
  // the replay thread updates those stats on every event, and counting into
  // the same cache lines from this thread made both threads wait on each
  // other's writes.
  struct Counters {
    uint64_t records = 0, samples = 0, bad_samples = 0, skipped_samples = 0, other_syscall_samples = 0;
    uint64_t memory_samples = 0, unknown_records = 0, bad_records = 0;
  } st_;
  UnparsedTracker unparsed_;  // where the bad samples and records were

  // Scratch, reused per record.
  perf::Sample sample_;
  std::vector<uint8_t> reread_buffer_;  // ReadSampleAgain's record
  decode::DecodedSyscall dsc_;

  struct RawDuplicate {
    uint64_t time;
    decode::Syscall syscall;
    bool exit;
  };
  absl::flat_hash_map<uint32_t, RawDuplicate> raw_duplicates_;  // tid -> its last raw duplicate sample
  // A thread's last syscalls:* sample, to pair a raw_syscalls duplicate that
  // comes right after it (OnRawDuplicate).
  struct LastCallSample {
    decode::Syscall syscall;
    bool exit;
    bool had_raw_duplicate;
  };
  absl::flat_hash_map<uint32_t, LastCallSample> last_call_sample_;  // tid -> its last syscalls:* sample
};

}  // namespace pageblame::replay

#endif  // PAGEBLAME_REPLAY_LOAD_PASS_H_

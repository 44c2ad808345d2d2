// Applies time-ordered TraceEvents to the index: the process table (fork,
// exec, exit, threads sharing their process's space), per-thread syscall
// pairing, and the replay rules of the memory syscalls (call_rules.h). The
// symbolizer only lends it executables' segment tables (an image's data and
// bss segments, which perf reports no record of); the mapping history it
// reads when printing is the loader's (symbols/mapping_history.h).
//
//   Replayer r(&index, &symbolizer);
//   sorter delivers: r.Apply(event);  // a kCall twice: r.Apply(call, /*exit_part=*/false), then true
//   r.Finish();
#ifndef PAGEBLAME_REPLAY_REPLAYER_H_
#define PAGEBLAME_REPLAY_REPLAYER_H_

#include <cstdint>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"

#include "processor/index/trace_index.h"
#include "processor/replay/attach_reconciler.h"
#include "processor/replay/process_table.h"
#include "processor/replay/syscall_pairer.h"
#include "processor/replay/trace_event.h"
#include "processor/symbols/symbolizer.h"

namespace pageblame::replay {

class Replayer {
 public:
  // `attach` (may be null) is applied as its tables fall due.
  Replayer(index::TraceIndex* idx, symbols::Symbolizer* symbolizer, AttachReconciler* attach = nullptr)
      : idx_(idx), symbolizer_(symbolizer), procs_(idx),
        heap_name_(idx->strings().Intern("[heap]")), attach_(attach) {}

  // `exit_part` says which half of a kCall event this is (its enter, at
  // e.time, or its exit, at e.exit_time); other kinds are applied whole.
  void Apply(const TraceEvent& e, bool exit_part = false);
  // End of trace: counts enters still waiting for their exit.
  void Finish();
  // Between events: thins the index at `cutoff` (TraceIndex::ThinBefore)
  // and renumbers the calls this replay's threads still name; the replay
  // goes on as if the index had always been so (index_thinning.h).
  void ThinBefore(uint64_t cutoff);
  // Between events: each enter waiting for its exit, to change in place
  // (ProcessTable::ForEachWaitingEnter).
  void ForEachWaitingEnter(absl::FunctionRef<void(TraceEvent&)> fn) { procs_.ForEachWaitingEnter(fn); }

 private:
  // What a call's exit says (from a kExit event or a kCall's exit half).
  struct CallExit {
    uint64_t time;
    uint64_t raw_duplicate_time;  // its raw_syscalls duplicate's, 0 if none
    int64_t ret;
    uint32_t pid;
    uint32_t tid;
    decode::Syscall syscall;
  };
  void OnEnter(const TraceEvent& e);
  void OnExit(const CallExit& exit);
  // `th` is the exiting thread's state (`call` is in it).
  void OnCall(const SyscallPairer::Pending& call, const CallExit& exit, ProcessTable::Thread& th);
  void OnMmapRecord(const TraceEvent& e);
  // Adds, as before-trace pages, the rest of the ELF image that a code
  // mapping [start, end) at file offset pgoff belongs to.
  void AddImageOf(uint32_t p, const TraceEvent& e, std::string_view path);
  void OnFork(const TraceEvent& e);
  void OnComm(const TraceEvent& e);
  void OnLost(const TraceEvent& e);
  // A call or record with values the kernel cannot have produced (CheckCall):
  // counted, not replayed.
  void OnImpossible(uint64_t time, const absl::Status& why);
  // A raw_syscalls duplicate recorded after its call's own enter or exit.
  void OnLateRawDuplicate(const TraceEvent& e);
  // The call thread `tid` is inside, or null (no state is made for it).
  SyscallPairer::Pending* InCall(uint32_t tid);

  index::TraceIndex* idx_;
  symbols::Symbolizer* symbolizer_;
  ProcessTable procs_;
  uint64_t last_time_ = 0;
  StringId heap_name_;  // "[heap]", the path of brk's pages
  AttachReconciler* attach_;
};

}  // namespace pageblame::replay

#endif  // PAGEBLAME_REPLAY_REPLAYER_H_

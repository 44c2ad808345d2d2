// Applies time-ordered TraceEvents to the index: the process table (fork,
// exec, exit, threads sharing their process's space), per-thread syscall
// pairing, and the replay rules of the design brief for mmap, munmap, brk and
// mremap. Also feeds the symbolizer the mappings it needs, in time order.
//
//   Replayer r(&index, &symbolizer);
//   sorter delivers: r.Apply(event);  // a kCall twice: r.Apply(call, /*exit_part=*/false), then true
//   r.Finish();
#ifndef PAGEBLAME_REPLAY_REPLAYER_H_
#define PAGEBLAME_REPLAY_REPLAYER_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "processor/index/trace_index.h"
#include "processor/replay/address_space.h"
#include "processor/replay/syscall_pairer.h"
#include "processor/replay/trace_event.h"
#include "processor/symbols/symbolizer.h"

namespace pageblame::replay {

class Replayer {
 public:
  Replayer(index::TraceIndex* idx, symbols::Symbolizer* symbolizer)
      : idx_(idx), symbolizer_(symbolizer), heap_name_(idx->strings().Intern("[heap]")) {}

  // `exit_part` says which half of a kCall event this is (its enter, at
  // e.time, or its exit, at e.exit_time); other kinds are applied whole.
  void Apply(const TraceEvent& e, bool exit_part = false);
  // End of trace: counts enters still waiting for their exit.
  void Finish();

 private:
  // Replay state of a process that the index does not need to keep.
  struct ProcState {
    bool brk_known = false;
    uint64_t brk = 0;  // current program break (unaligned, as brk() returns it)
    // From exec (or the start of an attach) until the process's first traced
    // call, mapping records outside calls are the kernel's exec mappings or
    // perf's synthesized ones: their ELF images are mapped whole.
    bool image_window = true;
    // Its live threads: it exits with the last.
    absl::flat_hash_set<uint32_t> threads;
  };
  // Replay state of a thread, found with one lookup per event (a hash lookup
  // per table per event was a sizeable part of replay), its syscall pairing
  // included.
  struct ThreadState {
    // The process it was last seen in (pid, process index), valid while
    // `seen` equals membership_.
    uint32_t pid = 0;
    uint32_t process = 0;
    uint64_t seen = 0;
    bool has_comm = false;
    StringId comm;
    EventId last_event;  // its last recorded call, until its next call's exit
    SyscallPairer call;  // its enter waiting for an exit
  };

  uint32_t ProcessFor(uint32_t pid, uint64_t time);
  // ProcessFor, remembering that thread `tid` lives in that process.
  ThreadState& ThreadSeen(uint32_t pid, uint32_t tid, uint64_t time);
  // The same for a state already found (no lookup).
  ThreadState& Seen(ThreadState& th, uint32_t pid, uint32_t tid, uint64_t time);
  // The call thread `tid` is inside, or null (no state is made for it).
  SyscallPairer::Pending* InCall(uint32_t tid);
  ProcState& Proc(uint32_t p) {
    if (p >= procs_.size()) procs_.resize(p + 1);
    return procs_[p];
  }
  // A pid's process or a process's threads changed: every thread's cached
  // process is looked up again when next seen.
  void MembershipChanged() { ++membership_; }
  // What a call's exit says (from a kExit event or a kCall's exit half).
  struct CallExit {
    uint64_t time;
    uint64_t twin_time;  // its raw_syscalls twin's, 0 if none
    int64_t ret;
    uint32_t pid;
    uint32_t tid;
    decode::Syscall syscall;
  };
  void OnEnter(const TraceEvent& e);
  void OnExit(const CallExit& exit);
  // `th` is the exiting thread's state (`call` is in it).
  void OnCall(const SyscallPairer::Pending& call, const CallExit& exit, ThreadState& th);
  void OnMmapRecord(const TraceEvent& e);
  // Adds, as before-trace pages, the rest of the ELF image that a code
  // mapping [start, end) at file offset pgoff belongs to.
  void AddImageOf(uint32_t p, const TraceEvent& e, std::string_view path);
  void OnFork(const TraceEvent& e);
  void OnComm(const TraceEvent& e);
  void OnLost(const TraceEvent& e);
  // A raw_syscalls twin recorded after its call's own enter or exit.
  void OnLateTwin(const TraceEvent& e);
  // True if the version of `piece` was made after time `since` by another
  // thread than `tid`, in a way the kernel only allows on a free range (see
  // .cc).
  bool PlacedInFreeRangeSince(const AddressSpace::Piece& piece, uint64_t since,
                              uint32_t tid) const;

  index::TraceIndex* idx_;
  symbols::Symbolizer* symbolizer_;
  absl::flat_hash_map<uint32_t, uint32_t> pid_to_process_;  // current generation
  std::vector<ProcState> procs_;                             // by process index
  // By tid. OnCall gets a call that lives here: nothing adds threads during it.
  absl::flat_hash_map<uint32_t, ThreadState> thread_state_;
  uint64_t membership_ = 1;
  uint64_t last_time_ = 0;
  StringId heap_name_;  // "[heap]", the path of brk's pages
};

}  // namespace pageblame::replay

#endif  // PAGEBLAME_REPLAY_REPLAYER_H_

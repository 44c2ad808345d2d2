// Time ordering and replay on a second thread, so that reading and decoding
// the file (the loader's thread) overlaps with sorting and replaying what was
// read before. The two halves cost about the same, so on a machine with two
// free cores a load takes little more than the reading alone.
//
//   ReplayWorker worker(&index, &symbolizer);    // starts the thread
//   worker.Push(event); ...                      // loader thread, file order
//   worker.FinishedRound();                      // at each FINISHED_ROUND
//   uint64_t out_of_order = worker.Finish();     // waits for the replay to end
//
// The replay thread sees exactly the events, rounds and order a
// single-threaded EventSorter -> Replayer would (batches are handed over in
// file order), so results are the same, run after run. Events travel in
// batches of up to kBatch (or a round, if shorter); at most kMaxQueued batches
// wait at a time, so memory stays bounded when replay is the slower half.
// Destroying a worker without Finish() (the loader hit an error) stops the
// thread without finishing the replay.
//
// Two orderings (see lane_sorter.h): Ordering::kRounds is perf's rule as
// EventSorter has it, where events go out at round ends. Ordering::kLanes
// replays events as soon as every CPU is past them, in slices of kSlice
// events between looks at the queue, so reading and replay overlap within
// rounds and the last round is not replayed after the whole file; if the
// trace breaks that rule's assumption, diverged() turns true, the loader
// stops and must load again with kRounds.
#ifndef PAGEBLAME_REPLAY_REPLAY_WORKER_H_
#define PAGEBLAME_REPLAY_REPLAY_WORKER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"
#include "processor/index/trace_index.h"
#include "processor/replay/trace_event.h"
#include "processor/symbols/symbolizer.h"

namespace pageblame::replay {

class EventSorter;
class LaneSorter;
class Replayer;

class ReplayWorker {
 public:
  // Small batches: little memory in flight (at most ~7 MB of events), and the
  // replay thread starts early; a handover per 8 Ki events costs nothing.
  static constexpr size_t kBatch = 1 << 13;
  static constexpr size_t kMaxQueued = 8;
  // kLanes: events replayed between looks at the queue, and how many pushed
  // but not yet replayed events the replay thread may hold before it stops
  // taking batches (while it has any it can replay). Larger holds buy no
  // speed and cost peak memory (bench/HISTORY.md, "More lookahead").
  static constexpr size_t kSlice = 1 << 12;
  static constexpr size_t kMaxHeld = 1 << 16;

  enum class Ordering { kRounds, kLanes };

  // kLanes needs the recording's CPU count (FileInfo::nr_cpus). input_bytes:
  // how much the loader will read (the data section; 0 if unknown, a pipe),
  // for BuffersAhead.
  // `attach` (may be null): the kernel's tables at the attach, applied by
  // the replay as they fall due (attach_reconciler.h).
  ReplayWorker(index::TraceIndex* idx, symbols::Symbolizer* symbolizer,
               Ordering ordering = Ordering::kRounds, uint32_t cpus = 0,
               uint64_t input_bytes = 0, class AttachReconciler* attach = nullptr);

  // How many event buffers the replay thread makes for the loader before it
  // starts: as many as `input_bytes` can fill (a full batch is at least
  // kMinBatchBytes of file), up to a full queue; none if the size is unknown.
  static size_t BuffersAhead(uint64_t input_bytes);
  // Every event is a sample of at least ~128 bytes (header, ids, the raw
  // tracepoint, a callchain), and most are calls: an enter and an exit.
  static constexpr uint64_t kMinBatchBytes = uint64_t{kBatch} * 256;
  ~ReplayWorker();
  ReplayWorker(const ReplayWorker&) = delete;
  ReplayWorker& operator=(const ReplayWorker&) = delete;

  // Loader thread only. Push and FinishedRound do nothing once diverged().
  void Push(const TraceEvent& e) {
    Add() = e;
    Added();
  }
  // The same in two steps, for the loader's hot path: Add() makes the event
  // at the end of the current batch, to be filled in place (no clear and
  // copy of a whole event per sample), and Added() hands it over.
  TraceEvent& Add() { return current_.events.emplace_back(); }
  void Added() {
    enters_ += current_.events.back().kind == TraceEvent::Kind::kEnter;
    if (current_.events.size() >= kBatch) Submit(/*round_end=*/false);
  }
  // A syscall's exit: if the event Added() last is its enter (same pid,
  // tid, CPU and syscall, no later) and still in the batch being filled,
  // that enter becomes the whole call (a kCall) and this returns true; the
  // exit is not to be added. Always false with Ordering::kRounds
  // (EventSorter takes no kCall).
  bool JoinExit(uint32_t pid, uint32_t tid, uint32_t cpu, decode::Syscall syscall,
                uint64_t time, int64_t ret) {
    if (lane_sorter_ == nullptr || current_.events.empty()) return false;
    TraceEvent& in = current_.events.back();
    if (in.kind != TraceEvent::Kind::kEnter || in.pid != pid || in.tid != tid || in.cpu != cpu ||
        in.syscall != syscall || in.time > time) {
      return false;
    }
    in.kind = TraceEvent::Kind::kCall;  // the same Call payload
    in.call().exit_time = time;
    in.call().ret = ret;
    return true;
  }
  // Two round ends with no event between them release everything pushed
  // (both orderings deliver up to the newest time of the round before), and
  // further ones change nothing: they are not handed over, since each
  // handover wakes the replay thread, and a hostile trace may hold millions
  // of empty rounds (bench/HISTORY.md).
  void FinishedRound() {
    if (current_.events.empty() && quiet_rounds_ >= 2) return;
    quiet_rounds_ = current_.events.empty() ? quiet_rounds_ + 1 : 1;
    Submit(/*round_end=*/true);
  }
  // Replays everything pushed, ends the replay (Replayer::Finish) and joins
  // the thread. Returns the number of events delivered out of time order.
  // While the replay thread finishes, the caller's `meanwhile` runs, one
  // piece of work per call, until it returns false or the replay is done
  // (so that the caller's core is not idle then, and the end not later by
  // more than one piece).
  uint64_t Finish(absl::FunctionRef<bool()> meanwhile = [] { return false; });
  // Loader thread: hands over the batch being filled, waits until the
  // replay thread has replayed every event it may so far (kRounds: up to
  // the last round's end) and runs `fn` while that thread waits, so `fn`
  // may read the index (the recorder's checkpoints). Does not run `fn` if
  // the replay ended or diverged.
  void Paused(absl::FunctionRef<void()> fn);
  // Inside Paused's `fn` only (the replay thread waits): thins the index and
  // the replay's state at `cutoff` (Replayer::ThinBefore).
  void ThinWhilePaused(uint64_t cutoff);
  // Inside Paused's `fn` only: each event the replay holds and has not
  // applied yet (the sorter's, the threads' enters waiting for their exit),
  // to change in place: the stack table was thinned, and the stack ids they
  // carry are renumbered (LoadPass). The queue is empty while paused.
  void ForEachHeldWhilePaused(absl::FunctionRef<void(TraceEvent&)> fn);
  // kLanes only: the trace broke the lane rule; the index is incomplete.
  bool diverged() const { return diverged_.load(std::memory_order_relaxed); }

 private:
  struct Batch {
    std::vector<TraceEvent> events;
    bool round_end = false;
  };
  void Submit(bool round_end);
  // The replay thread: sorts and replays the batches the loader queues,
  // until Finish (then ends the replay), the destructor, or divergence.
  void Run();
  // Run's steps. Makes the loader's first buffers; false if abandoned.
  bool MakeBuffersAhead();
  // Waits for batches (unless kLanes has events due) and moves the queued
  // ones to `got`; kClosed once Finish was called and none is left.
  enum class Take { kReplay, kClosed, kAbandon };
  Take TakeBatches(std::deque<Batch>* got);
  void SortBatches(std::deque<Batch>* got);
  // kLanes: replays a slice; false if the trace diverged (the loader is told).
  bool DeliverSlice();
  // Hands the emptied buffers back to the loader.
  void ReturnSpares();
  // Replays what the sorter still holds, then ends the replay.
  void FinishReplay();

  // Used by the replay thread only, once it runs (the loader thread calls
  // only idx_->PrepareBlocks, which is safe alongside it).
  index::TraceIndex* idx_;
  std::unique_ptr<Replayer> replayer_;
  std::unique_ptr<EventSorter> sorter_;      // kRounds
  std::unique_ptr<LaneSorter> lane_sorter_;  // kLanes
  const size_t buffers_ahead_;  // BuffersAhead(input_bytes)
  Batch current_;  // being filled by the loader thread
  size_t enters_ = 0;  // pushed by the loader thread
  int quiet_rounds_ = 0;  // round ends handed over since the last event

  std::mutex mu_;
  std::condition_variable wake_worker_;  // a batch is queued, or the end
  std::condition_variable wake_loader_;  // room in the queue, or the worker is done
  std::deque<Batch> queue_;
  std::vector<std::vector<TraceEvent>> spare_;  // emptied buffers, reused
  bool closing_ = false;  // no more batches
  std::atomic<bool> done_{false};  // the replay thread is about to end
  std::atomic<bool> diverged_{false};  // set by the replay thread (kLanes)
  bool abandon_ = false;  // stop without finishing the replay
  bool pause_asked_ = false;  // Paused(): wait once everything queued is replayed
  bool paused_ = false;       // the replay thread waits for pause_asked_ to end
  std::thread thread_;  // last: started once everything above exists
};

}  // namespace pageblame::replay

#endif  // PAGEBLAME_REPLAY_REPLAY_WORKER_H_

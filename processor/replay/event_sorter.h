// Puts events in time order the way perf's ordered_events does
// (tools/perf/util/ordered-events.c): per-CPU buffers are written out in
// rounds, and at each FINISHED_ROUND every event up to the largest timestamp
// of the *previous* round is safe to deliver. Ties keep file order.
//
//   EventSorter sorter([&](const TraceEvent& e) { replayer.Apply(e); });
//   sorter.Push(e); ... sorter.FinishedRound(); ... sorter.FlushAll();
//   sorter.Push(std::move(batch));        // a whole batch, without copying it
//   for (auto& v : sorter.TakeSpares())   // batches delivered in full, emptied
//
// Memory is bounded by one round of memory-syscall events (not by the
// trace); if a trace has no rounds (some pipe-mode writers), the buffer is
// flushed in halves past kMaxBuffered events. It takes no kCall events
// (one event for two times; only LaneSorter splits them).
#ifndef PAGEBLAME_REPLAY_EVENT_SORTER_H_
#define PAGEBLAME_REPLAY_EVENT_SORTER_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/functional/function_ref.h"
#include "processor/replay/trace_event.h"

namespace pageblame::replay {

class EventSorter {
 public:
  static constexpr size_t kMaxBuffered = 1 << 22;

  explicit EventSorter(std::function<void(const TraceEvent&)> sink) : sink_(std::move(sink)) {}

  void Push(const TraceEvent& e);
  // Takes a batch of events in push (file) order as they are: the events stay
  // where they are until delivered, and the emptied vector comes back from
  // TakeSpares.
  void Push(std::vector<TraceEvent>&& batch);
  void FinishedRound();
  void FlushAll();
  // Events delivered with a time older than an event already delivered.
  uint64_t out_of_order() const { return out_of_order_; }
  // Batches whose events have all been delivered, cleared (capacity kept).
  std::vector<std::vector<TraceEvent>> TakeSpares();
  // Each event waiting to be delivered, in push order, to change in place
  // (the stack table was thinned: their stack ids are renumbered). Not to
  // change their times.
  void ForEachHeld(absl::FunctionRef<void(TraceEvent&)> fn) {
    for (Chunk& c : chunks_) {
      for (TraceEvent& e : c) fn(e);
    }
  }

 private:
  // Buffered events are kept in the batches they came in, in push order;
  // every event in chunks_ is waiting to be delivered.
  using Chunk = std::vector<TraceEvent>;
  void FlushUpTo(uint64_t limit);
  // Sorts keys_ by (time, push order), given the run boundaries in runs_.
  void OrderKeys();
  // More sorted runs than this in one flush is not the shape perf writes.
  static constexpr size_t kMaxRuns = 256;
  std::function<void(const TraceEvent&)> sink_;
  struct Key {
    uint64_t time;
    uint32_t chunk;   // into chunks_ (push order)
    uint32_t offset;  // into that chunk's events
  };
  std::vector<Chunk> chunks_;
  std::vector<std::vector<TraceEvent>> spares_;
  size_t waiting_ = 0;        // events buffered, not yet delivered
  std::vector<Key> keys_;
  std::vector<size_t> runs_;  // keys_[runs_[i], runs_[i+1]) is sorted by time
  uint64_t max_time_ = 0;     // largest time pushed so far
  uint64_t next_flush_ = 0;   // largest time as of the previous round
  bool have_round_ = false;
  uint64_t last_delivered_ = 0;
  uint64_t out_of_order_ = 0;
};

}  // namespace pageblame::replay

#endif  // PAGEBLAME_REPLAY_EVENT_SORTER_H_

// Puts events in time order *during* each round instead of at its end, and
// proves afterwards that the order is the one perf's rule gives.
//
// perf's rule (EventSorter) can let an event out only once the round after
// its own is read. perf trace record writes rounds of very different sizes
// (a 550 Ki-sample round next to a 30-sample one, with -m 256M), so the
// replay thread sat idle while such a round was read and the reader sat idle
// while it was replayed; the last round was replayed after the whole file.
//
// What the file shows instead: a round is each CPU's ring buffer written out
// in turn, and one CPU's events are in time order. So no event still to come
// from CPU c is older than the newest one read from c, and (perf's own
// assumption) none is older than the newest event of the round before the
// last one. The smallest of those bounds over all the recording's CPUs (the
// NRCPUS header; a CPU with no events yet is bound by the second alone) is a
// time up to which every event has been read: those go out at once, merged
// across CPUs by (time, file order). A CPU that never runs the traced
// program holds the bound at perf's own: no gain, no loss.
//
// The rule rests on the same assumption as perf's, but this class does not
// trust it: every event pushed is checked against what would already have
// gone out, under this rule and under perf's (including EventSorter's
// count-based flush for traces without rounds). When all checks pass, both
// orders are the file's events sorted by (time, file order), the same
// sequence. When one fails, diverged() turns true and delivery stops: the
// caller replays the trace again with EventSorter (trace_loader.cc).
//
//   LaneSorter sorter(info.nr_cpus, [&](const TraceEvent& e, bool exit_part) {
//     replayer.Apply(e, exit_part);
//   });
//   sorter.Push(std::move(batch)); sorter.FinishedRound();
//   while (sorter.Deliver(4096) > 0 && !more_input) {}
//   sorter.FlushAll();
//   if (sorter.diverged()) { /* start again with EventSorter */ }
//
// Events without a CPU (sideband records without sample_id_all), or with a
// CPU number at or past the header's count, go out by the same bound but do
// not set it; a late one is caught by the checks.
//
// A kCall event (an enter and its exit, adjacent in the file) goes out
// twice, as the two events it stands for would: its enter half at its time
// with exit_part false, then its exit half at exit_time with exit_part true,
// each in its own place in the order. It counts as two events everywhere
// (file order, held(), the checks).
#ifndef PAGEBLAME_REPLAY_LANE_SORTER_H_
#define PAGEBLAME_REPLAY_LANE_SORTER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "processor/replay/trace_event.h"

namespace pageblame::replay {

class LaneSorter {
 public:
  // CPUs numbered at or above this share the no-CPU lane (a bad number in a
  // corrupt sample must not size a vector).
  static constexpr uint32_t kMaxLanes = 4096;

  // `cpus`: the recording machine's CPU count (FileInfo::nr_cpus), > 0.
  using Sink = std::function<void(const TraceEvent&, bool exit_part)>;
  LaneSorter(uint32_t cpus, Sink sink);

  // A batch of events in file order; the events stay in it until delivered,
  // and the emptied vector comes back from TakeSpares.
  void Push(std::vector<TraceEvent>&& batch);
  void FinishedRound();
  // Delivers up to `max` events that are due; returns how many it did.
  size_t Deliver(size_t max);
  // Whether Deliver would deliver something now.
  bool HasDue() const;
  // The end of the trace: delivers everything.
  void FlushAll();
  // Events pushed and not delivered yet.
  size_t held() const { return held_; }
  // An event broke the assumption (see above): nothing more is delivered,
  // and what was delivered may differ from perf's order.
  bool diverged() const { return diverged_; }
  std::vector<std::vector<TraceEvent>> TakeSpares();
  // Each event of the batches held, in push order, to change in place (the
  // stack table was thinned: their stack ids are renumbered); some may have
  // been delivered already. Not to change their times.
  void ForEachHeld(absl::FunctionRef<void(TraceEvent&)> fn) {
    for (Chunk& c : chunks_) {
      for (TraceEvent& e : c.events) fn(e);
    }
  }

 private:
  struct Key {
    uint64_t time;
    uint64_t seq;     // file order, for ties
    uint32_t chunk;   // absolute chunk number
    uint32_t offset;  // in that chunk, | kExitPart for a kCall's exit half
  };
  // Batches are far smaller than 2^31 events.
  static constexpr uint32_t kExitPart = 1u << 31;
  struct Lane {
    std::deque<Key> keys;  // by (time, seq)
    uint64_t newest = 0;   // newest time pushed on this lane
  };
  struct Chunk {
    std::vector<TraceEvent> events;
    size_t left = 0;  // deliveries to come (a kCall's two halves count two)
  };
  void AddToLane(Lane* lane, const Key& k);
  void UpdateLimit();
  // Whether the lane's head is due (not past limit_).
  bool IsDue(const Lane& lane) const;
  // Delivery order: (time, seq).
  using Order = std::pair<uint64_t, uint64_t>;
  static Order OrderOf(const Key& k) { return {k.time, k.seq}; }
  // The lane whose head is next in delivery order and due, or null; and in
  // *until the first head of the other lanes (UINT64_MAX if none): the
  // lane's keys before it go out as one run, without looking again.
  Lane* NextDue(Order* until);

  Sink sink_;
  std::deque<Chunk> chunks_;  // chunks_[0] is chunk number first_chunk_
  uint32_t first_chunk_ = 0;
  std::vector<std::vector<TraceEvent>> spares_;
  std::vector<Lane> lanes_;  // by CPU, one per CPU of the recording
  Lane no_cpu_;              // does not bound the others
  uint64_t seq_ = 0;
  size_t held_ = 0;
  uint64_t limit_ = 0;           // events up to this time are due
  // Time of the newest event delivered; 0 (before any) lets every time in.
  uint64_t last_delivered_ = 0;
  bool finished_ = false;        // FlushAll called
  bool diverged_ = false;
  // perf's rule, followed without delivering by it (see EventSorter).
  uint64_t max_time_ = 0;
  uint64_t next_flush_ = 0;
  uint64_t perf_limit_ = 0;      // the limit of perf's last flush (0: none yet)
  bool have_round_ = false;
  // Events pushed before the last and the one-before-last round ends: perf's
  // rule holds at most the events pushed since the one-before-last.
  uint64_t pushed_at_round_[2] = {0, 0};
};

}  // namespace pageblame::replay

#endif  // PAGEBLAME_REPLAY_LANE_SORTER_H_

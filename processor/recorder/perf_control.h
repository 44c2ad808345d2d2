// PerfControl: perf record's control FIFOs (`--control fifo:CTL,ACK`, perf
// 5.12+), used to make perf write out what its ring buffers hold: perf
// answers a "ping" with "ack" and then reads every ring buffer before it
// waits again, so after two answered pings all the recorded processes did
// before the first is in the trace.
//
// Why: `perf record -z` compresses each batch it reads into COMPRESSED
// records of at most 64 KiB, and when the batch's last record is full,
// what zstd could not flush into it stays inside zstd until the next batch
// (tools/perf/util/zstd.c ignores ZSTD_flushStream's remainder). The
// recording's last batch has no next one: those bytes are never written,
// and the trace ends inside a record (seen live: a .NET recording's last
// 16 KiB DWARF sample cut after 3,784 bytes; 7 of 16 recordings of a
// program whose stacks do not compress). perf reads a ring buffer only
// when it is half full (64 MiB at -m 128M) or at the end, so most
// recordings are one or two batches. Hence the recorder
//   - pings perf every `kTick` while it records (Start): every batch is
//     small, fits its records, and leaves nothing inside zstd; and
//   - drains (Drain) before the end it causes: at the command's exit stop
//     (exit_tracer.h) and before it passes a stop signal to perf. What comes
//     after (at least the command's EXIT records) is a small last batch,
//     which writes any remainder of the one before.
//
// perf reads its control FIFO in its main loop only, after it has reported
// the mappings that exist and turned its events on: an answered ping also
// says that perf records (Answered), which the recorder waits for before
// its first snapshot and its table of the mappings at the attach.
//
// A ping costs perf one pass over its ring buffers. Threads: Ping and
// Drain may be called from any thread (one at a time, under a lock); the
// tick thread is this object's own.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<PerfControl> control, PerfControl::Open());
//   argv.insert(argv.begin() + 2, control->PerfArgs());  // after "perf record"
//   ... fork and exec perf ...
//   control->Start();
//   ... at the command's exit:  control->Drain();
//   control->Stop();  // perf ended
#ifndef PAGEBLAME_RECORDER_PERF_CONTROL_H_
#define PAGEBLAME_RECORDER_PERF_CONTROL_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"

namespace pageblame::recorder {

class PerfControl {
 public:
  // Between pings while perf records: a batch of 50 ms stays far below a
  // COMPRESSED record's 64 KiB even for stacks that compress 2:1.
  static constexpr std::chrono::milliseconds kTick{50};
  // How long a ping waits for perf's answer.
  static constexpr std::chrono::milliseconds kAnswer{500};

  // Makes the two FIFOs in a new private directory and opens both ends this
  // side needs (before perf starts: perf's non-blocking open of the ack
  // FIFO for writing fails while nobody reads it).
  static absl::StatusOr<std::unique_ptr<PerfControl>> Open();
  ~PerfControl();
  PerfControl(const PerfControl&) = delete;
  PerfControl& operator=(const PerfControl&) = delete;

  // perf record's arguments for these FIFOs: {"--control", "fifo:CTL,ACK"}.
  std::vector<std::string> PerfArgs() const;
  // Starts pinging every kTick on a thread of its own.
  void Start();
  // One ping; true once perf has answered (within `wait`).
  bool Ping(std::chrono::milliseconds wait = kAnswer);
  // Two answered pings: everything recorded before the call is written.
  bool Drain();
  // Whether perf has answered a ping: its events are on.
  bool Answered() const { return answered_.load(std::memory_order_acquire); }
  // Ends the pings (perf has ended, or is ending); a waiting ping returns.
  void Stop();

 private:
  PerfControl() = default;
  // Waits until the ack FIFO holds an answer, or `wait` passes, or Stop().
  bool AwaitAnswer(std::chrono::milliseconds wait);
  void Tick();

  std::string dir_;
  int ctl_ = -1;             // CTL, open read-write: our writes never block or fail with no reader
  int ack_ = -1;             // ACK, open read-write: perf's open for writing finds a reader
  int stop_[2] = {-1, -1};   // Stop() writes to stop_[1]
  std::mutex ping_;          // one ping at a time, so each answer is its own
  std::thread ticks_;
  std::atomic<bool> answered_{false};
};

}  // namespace pageblame::recorder

#endif  // PAGEBLAME_RECORDER_PERF_CONTROL_H_

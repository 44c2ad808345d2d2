#include "processor/replay/replay_worker.h"

#include <algorithm>
#include <utility>

#include "processor/replay/event_sorter.h"
#include "processor/replay/lane_sorter.h"
#include "processor/replay/replayer.h"

namespace pageblame::replay {

ReplayWorker::ReplayWorker(index::TraceIndex* idx, symbols::Symbolizer* symbolizer,
                           Ordering ordering, uint32_t cpus, uint64_t input_bytes,
                           AttachReconciler* attach)
    : idx_(idx),
      replayer_(std::make_unique<Replayer>(idx, symbolizer, attach)),
      buffers_ahead_(BuffersAhead(input_bytes)) {
  // Constructed here, on the loader's thread, so that whatever the Replayer
  // sets up in the index (it interns "[heap]") happens in the same order on
  // every run.
  if (ordering == Ordering::kLanes) {
    lane_sorter_ = std::make_unique<LaneSorter>(
        cpus, [this](const TraceEvent& e, bool exit_part) { replayer_->Apply(e, exit_part); });
  } else {
    sorter_ = std::make_unique<EventSorter>([this](const TraceEvent& e) { replayer_->Apply(e); });
  }
  current_.events.reserve(kBatch);
  thread_ = std::thread([this] { Run(); });
}

size_t ReplayWorker::BuffersAhead(uint64_t input_bytes) {
  return static_cast<size_t>(std::min<uint64_t>(kMaxQueued, input_bytes / kMinBatchBytes));
}

ReplayWorker::~ReplayWorker() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    abandon_ = true;
  }
  wake_worker_.notify_one();
  thread_.join();
}

void ReplayWorker::Submit(bool round_end) {
  current_.round_end = round_end;
  if (!round_end && !current_.events.empty()) quiet_rounds_ = 0;
  if (diverged()) {  // the replay thread stopped: nothing to hand over
    current_.events.clear();
    return;
  }
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (queue_.size() >= kMaxQueued) {
      // The replay thread is behind: make the index blocks it will need
      // instead of waiting idle (it takes them ready).
      lock.unlock();
      idx_->PrepareBlocks(enters_);
      lock.lock();
    }
    wake_loader_.wait(lock, [this] { return queue_.size() < kMaxQueued || diverged(); });
    queue_.push_back(std::move(current_));
    current_ = Batch();
    if (!spare_.empty()) {
      current_.events = std::move(spare_.back());
      spare_.pop_back();
    }
  }
  wake_worker_.notify_one();
  if (current_.events.capacity() == 0) current_.events.reserve(kBatch);
}

uint64_t ReplayWorker::Finish(absl::FunctionRef<bool()> meanwhile) {
  if (!current_.events.empty()) Submit(/*round_end=*/false);
  // The same while the replay thread finishes the last events.
  idx_->PrepareBlocks(enters_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  wake_worker_.notify_one();
  while (!done_.load(std::memory_order_acquire) && meanwhile()) {
  }
  thread_.join();
  return sorter_ ? sorter_->out_of_order() : 0;
}

void ReplayWorker::Paused(absl::FunctionRef<void()> fn) {
  if (!current_.events.empty()) Submit(/*round_end=*/false);
  std::unique_lock<std::mutex> lock(mu_);
  pause_asked_ = true;
  wake_worker_.notify_one();
  wake_loader_.wait(lock, [this] { return paused_ || diverged() || done_.load(std::memory_order_acquire); });
  if (paused_) {
    lock.unlock();
    fn();
    lock.lock();
  }
  pause_asked_ = false;
  lock.unlock();
  wake_worker_.notify_one();
}

void ReplayWorker::ThinWhilePaused(uint64_t cutoff) { replayer_->ThinBefore(cutoff); }

void ReplayWorker::ForEachHeldWhilePaused(absl::FunctionRef<void(TraceEvent&)> fn) {
  if (sorter_) sorter_->ForEachHeld(fn);
  if (lane_sorter_) lane_sorter_->ForEachHeld(fn);
  replayer_->ForEachWaitingEnter(fn);
}

void ReplayWorker::Run() {
  // Whichever way it ends (the caller's Finish looks).
  struct Done {
    std::atomic<bool>* done;
    ~Done() { done->store(true, std::memory_order_release); }
  } done{&done_};
  if (!MakeBuffersAhead()) return;
  while (true) {
    std::deque<Batch> got;
    const Take take = TakeBatches(&got);
    if (take == Take::kAbandon) return;
    if (take == Take::kClosed) break;
    if (!got.empty()) wake_loader_.notify_one();
    SortBatches(&got);
    if (!DeliverSlice()) return;
    ReturnSpares();
  }
  FinishReplay();
}

bool ReplayWorker::MakeBuffersAhead() {
  // Each buffer the loader fills is fresh memory it would otherwise fault in
  // itself, on the path that sets the end of the run. This thread has
  // nothing to do until the first batch comes: it makes `buffers_ahead_` of
  // them, and the loader takes them from the spares as it hands batches over
  // (the count and its measurements: bench/HISTORY.md, "Design measurements").
  for (size_t i = 0; i < buffers_ahead_; ++i) {
    std::vector<TraceEvent> buffer;
    buffer.resize(kBatch);  // touches every page; clear() keeps them
    buffer.clear();
    std::lock_guard<std::mutex> lock(mu_);
    if (abandon_) return false;
    spare_.push_back(std::move(buffer));
  }
  return true;
}

ReplayWorker::Take ReplayWorker::TakeBatches(std::deque<Batch>* got) {
  // kLanes: while there are events to replay, only a look at the queue
  // (and none while enough are held, so that a slow replay makes the
  // loader wait instead of piling up events).
  const bool busy = lane_sorter_ && lane_sorter_->HasDue();
  if (lane_sorter_ && !busy) {
    // Nothing to replay until the loader reads further (the CPUs of a
    // big round are read one after the other): make the index's blocks
    // for what is held now, instead of in the middle of replaying it.
    // A call is two events and makes about one version.
    const size_t calls = lane_sorter_->held() / 2;
    idx_->Reserve(calls, calls);
  }
  std::unique_lock<std::mutex> lock(mu_);
  if (!busy) {
    wake_worker_.wait(lock, [this] { return abandon_ || closing_ || !queue_.empty() || pause_asked_; });
  }
  if (!busy && queue_.empty() && pause_asked_ && !abandon_) {
    // Everything handed over is replayed: the loader reads the index now.
    paused_ = true;
    wake_loader_.notify_one();
    wake_worker_.wait(lock, [this] { return abandon_ || !pause_asked_; });
    paused_ = false;
    if (abandon_) return Take::kAbandon;
    return Take::kReplay;  // nothing taken: look again
  }
  if (abandon_) return Take::kAbandon;
  if (!busy && queue_.empty()) return Take::kClosed;  // closing, and everything is replayed
  if (!busy || lane_sorter_->held() < kMaxHeld) got->swap(queue_);
  return Take::kReplay;
}

void ReplayWorker::SortBatches(std::deque<Batch>* got) {
  for (Batch& b : *got) {
    // The sorters keep the batch as it is (no copy of its events) and hand
    // it back once all of it is replayed.
    if (sorter_) {
      sorter_->Push(std::move(b.events));
      if (b.round_end) sorter_->FinishedRound();
    } else {
      lane_sorter_->Push(std::move(b.events));
      if (b.round_end) lane_sorter_->FinishedRound();
    }
  }
}

bool ReplayWorker::DeliverSlice() {
  if (!lane_sorter_) return true;
  lane_sorter_->Deliver(kSlice);
  if (!lane_sorter_->diverged()) return true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    diverged_ = true;
  }
  wake_loader_.notify_one();
  return false;
}

void ReplayWorker::ReturnSpares() {
  std::vector<std::vector<TraceEvent>> done =
      sorter_ ? sorter_->TakeSpares() : lane_sorter_->TakeSpares();
  if (done.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& v : done) spare_.push_back(std::move(v));
}

void ReplayWorker::FinishReplay() {
  if (sorter_) {
    sorter_->FlushAll();
  } else {
    lane_sorter_->FlushAll();
    if (lane_sorter_->diverged()) {
      diverged_ = true;
      return;
    }
  }
  replayer_->Finish();
}

}  // namespace pageblame::replay

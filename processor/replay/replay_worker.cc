#include "processor/replay/replay_worker.h"

#include <utility>

#include "processor/replay/event_sorter.h"
#include "processor/replay/replayer.h"

namespace pageblame::replay {

ReplayWorker::ReplayWorker(index::TraceIndex* idx, symbols::Symbolizer* symbolizer)
    : replayer_(std::make_unique<Replayer>(idx, symbolizer)),
      sorter_(std::make_unique<EventSorter>([this](const TraceEvent& e) { replayer_->Apply(e); })) {
  // Constructed here, on the loader's thread, so that whatever the Replayer
  // sets up in the index (it interns "[heap]") happens in the same order on
  // every run.
  current_.events.reserve(kBatch);
  thread_ = std::thread([this] { Run(); });
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
  {
    std::unique_lock<std::mutex> lock(mu_);
    wake_loader_.wait(lock, [this] { return queue_.size() < kMaxQueued; });
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

uint64_t ReplayWorker::Finish() {
  if (!current_.events.empty()) Submit(/*round_end=*/false);
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  wake_worker_.notify_one();
  thread_.join();
  return sorter_->out_of_order();
}

void ReplayWorker::Run() {
  while (true) {
    Batch b;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_worker_.wait(lock, [this] { return abandon_ || closing_ || !queue_.empty(); });
      if (abandon_) return;
      if (queue_.empty()) break;  // closing, and everything is replayed
      b = std::move(queue_.front());
      queue_.pop_front();
    }
    wake_loader_.notify_one();
    // The sorter keeps the batch as it is (no copy of its events) and hands
    // it back once all of it is replayed.
    sorter_->Push(std::move(b.events));
    if (b.round_end) sorter_->FinishedRound();
    std::vector<std::vector<TraceEvent>> done = sorter_->TakeSpares();
    if (done.empty()) continue;
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& v : done) spare_.push_back(std::move(v));
  }
  sorter_->FlushAll();
  replayer_->Finish();
}

}  // namespace pageblame::replay

#include "processor/symbols/inline_prefetcher.h"

#include <utility>

namespace pageblame::symbols {

InlinePrefetcher::~InlinePrefetcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void InlinePrefetcher::Request(const DsoLocation& loc) {
  if (loc.elf_path.empty() && loc.debug_path.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = slots_.try_emplace(loc.FilesKey());
  if (!inserted || stopping_) return;
  it->second = std::make_unique<Slot>();
  it->second->loc = loc;
  queue_.push_back(it->second.get());
  if (!worker_.joinable()) worker_ = std::thread([this] { Run(); });
  cv_.notify_all();
}

std::optional<std::unique_ptr<InlineResolver>> InlinePrefetcher::Take(const DsoLocation& loc,
                                                                      std::string* refused) {
  std::unique_lock<std::mutex> lock(mu_);
  auto it = slots_.find(loc.FilesKey());
  if (it == slots_.end() || it->second == nullptr) return std::nullopt;
  Slot* slot = it->second.get();
  cv_.wait(lock, [&] { return slot->done; });
  std::unique_ptr<InlineResolver> r = std::move(slot->resolver);
  if (refused != nullptr) *refused = std::move(slot->refused);
  it->second.reset();  // taken: a second Take opens the file itself
  return r;
}

void InlinePrefetcher::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    Slot* slot = queue_.front();
    queue_.pop_front();
    // Opened unlocked: Request and Take go on meanwhile; the slot stays put
    // (slots_ holds it by pointer and Take waits for `done`).
    lock.unlock();
    std::string refused;
    std::unique_ptr<InlineResolver> r = InlineResolver::Open(slot->loc, demangle_params_, &refused);
    lock.lock();
    slot->resolver = std::move(r);
    slot->refused = std::move(refused);
    slot->done = true;
    cv_.notify_all();
  }
}

}  // namespace pageblame::symbols

#include "processor/unwind/step_cache.h"

namespace pageblame::unwind {

StepCache::StepCache(const symbols::MappingHistory* maps) : maps_(maps) {
  static const symbols::MappingHistory kNoMappings;
  if (maps_ == nullptr) maps_ = &kNoMappings;
  generation_ = maps_->generation();
}

void StepCache::Sync() {
  if (maps_->generation() == generation_) return;
  entries_.clear();
  generation_ = maps_->generation();
}

const StepCache::Entry* StepCache::Find(uint32_t pid, uint64_t time, uint64_t pc) {
  Sync();
  if (time < maps_->latest_time()) return nullptr;
  auto it = entries_.find(std::make_pair(pid, pc));
  if (it == entries_.end()) return nullptr;
  ++hits_;
  return &it->second;
}

const StepCache::Entry* StepCache::Put(uint32_t pid, uint64_t time, uint64_t pc, const Entry& e) {
  Sync();
  if (time < maps_->latest_time()) {
    scratch_ = e;
    return &scratch_;
  }
  if (entries_.size() >= kMaxEntries) entries_.clear();
  return &entries_.insert_or_assign(std::make_pair(pid, pc), e).first->second;
}

}  // namespace pageblame::unwind

#include "processor/unwind/step_cache.h"

namespace pageblame::unwind {

StepCache::StepCache(const symbols::MappingHistory* maps) : maps_(maps) {
  static const symbols::MappingHistory kNoMappings;
  if (maps_ == nullptr) maps_ = &kNoMappings;
}

const StepCache::Entry* StepCache::Find(uint32_t pid, uint64_t time, uint64_t pc) {
  if (slots_ == nullptr || time < maps_->latest_time()) return nullptr;
  const Slot& s = SlotOf(pid, pc);
  if (s.generation != maps_->generation() + 1 || s.pc != pc || s.pid != pid) return nullptr;
  ++hits_;
  return &s.entry;
}

const StepCache::Entry* StepCache::Put(uint32_t pid, uint64_t time, uint64_t pc, const Entry& e) {
  if (time < maps_->latest_time()) {
    scratch_ = e;
    return &scratch_;
  }
  if (slots_ == nullptr) slots_ = std::make_unique<Slot[]>(kSlots);
  Slot& s = SlotOf(pid, pc);
  s.pc = pc;
  s.pid = pid;
  s.generation = maps_->generation() + 1;
  s.entry = e;
  return &s.entry;
}

}  // namespace pageblame::unwind

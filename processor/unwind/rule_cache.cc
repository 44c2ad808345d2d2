#include "processor/unwind/rule_cache.h"

#include <cstdlib>

namespace pageblame::unwind {

const FrameRule* RuleCache::Find(const ElfModule* module, uint64_t vaddr) {
  auto [it, inserted] = index_.try_emplace(Key(module, vaddr), -1);
  if (!inserted) {
    ++stats_.hits;
    return it->second < 0 ? nullptr : &rules_[it->second];
  }
  ++stats_.misses;
  Dwarf_Frame* frame = module->FrameAt(vaddr);
  FrameRule rule;
  const bool ok = frame != nullptr && FrameRule::Compile(frame, &expressions_, &rule);
  std::free(frame);
  if (!ok) {
    ++stats_.no_cfi;
    return nullptr;
  }
  rules_.push_back(rule);
  it->second = static_cast<int32_t>(rules_.size() - 1);
  return &rules_.back();
}

}  // namespace pageblame::unwind

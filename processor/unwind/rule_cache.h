// CFI rules by (module, pc), each computed once with libdw and kept as a
// FrameRule: samples of one call site unwind through the same few dozen pcs
// again and again, and finding the FDE and replaying its CFA program (what
// dwarf_cfi_addrframe does) costs far more than applying the result.
//
//   RuleCache rules;
//   const FrameRule* r = rules.Find(module, vaddr);   // null: no CFI covers vaddr
//   if (r) r->Apply(regs, mem, rules.expressions(), &caller);
//
// Memory: one entry per distinct pc met (a hash slot and, for pcs with CFI,
// a ~300-byte FrameRule), plus the expressions of the rules that have them.
// Not thread-safe (the loader's reading thread owns it).
#ifndef PAGEBLAME_UNWIND_RULE_CACHE_H_
#define PAGEBLAME_UNWIND_RULE_CACHE_H_

#include <cstdint>
#include <deque>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "processor/unwind/elf_module.h"
#include "processor/unwind/frame_rule.h"

namespace pageblame::unwind {

class RuleCache {
 public:
  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;  // computed with libdw
    uint64_t no_cfi = 0;  // of the misses, pcs no FDE covers (or CFI libdw rejects)
  };

  const FrameRule* Find(const ElfModule* module, uint64_t vaddr);
  const ExpressionPool& expressions() const { return expressions_; }
  const Stats& stats() const { return stats_; }
  // Bytes held, for -v.
  size_t bytes() const {
    return index_.capacity() * (sizeof(Key) + sizeof(int32_t) + 1) + rules_.size() * sizeof(FrameRule);
  }

 private:
  using Key = std::pair<const ElfModule*, uint64_t>;
  absl::flat_hash_map<Key, int32_t> index_;  // -> rules_ index, -1: no CFI
  std::deque<FrameRule> rules_;
  ExpressionPool expressions_;
  Stats stats_;
};

}  // namespace pageblame::unwind

#endif  // PAGEBLAME_UNWIND_RULE_CACHE_H_

// What one unwinding step looks up for a pc, kept per (pid, pc): the code
// that holds it (ModuleMap::Find: the mapping history's search by process,
// time and address, the file, the pc as a file address) and the CFI rule
// there (RuleCache::Find). Samples of a call site step through the same
// return addresses again and again; those lookups cost several times what
// applying the rule does, and this makes them one hash lookup.
//
//   StepCache steps(&history);
//   if (const StepCache::Entry* e = steps.Find(pid, time, pc)) ... e->code, e->rule ...
//   else steps.Put(pid, time, pc, computed);
//
// When an answer holds: MappingHistory::Find(pid, time, pc) is the same for
// every time at or after the history's latest_time() while its
// generation() is unchanged (mapping_history.h). So an entry is kept and
// used only for times at or after latest_time(), and all are dropped when
// the generation changes (a mapping, fork or exec read): in a steady
// recording the code mappings were all read at the start, and every step
// of every later sample is a hit. Earlier samples (file order is not time
// order) take the lookups each time.
//
// A direct-mapped table of kSlots entries (a slot keeps the last (pid, pc)
// put there; ~0.5 MiB, made at the first Put): a hit is a multiply, a load
// and a compare, where a hash map's probe was a tenth of the unwinding. A
// call site's stack needs a few dozen slots; a JIT-heavy service's many
// pcs only make more lookups.
//
// Not thread-safe (the unwinder's thread owns it).
#ifndef PAGEBLAME_UNWIND_STEP_CACHE_H_
#define PAGEBLAME_UNWIND_STEP_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "processor/symbols/mapping_history.h"
#include "processor/unwind/frame_rule.h"
#include "processor/unwind/module_map.h"

namespace pageblame::unwind {

class StepCache {
 public:
  static constexpr int kSlotBits = 13;
  static constexpr size_t kSlots = size_t{1} << kSlotBits;

  struct Entry {
    ModuleMap::Code code;
    // With a rule lookup (an ELF module and a file address): its answer,
    // null if no CFI covers the pc.
    bool rule_looked_up = false;
    const FrameRule* rule = nullptr;
  };

  // `maps` outlives this (null: none, as ModuleMap takes it).
  explicit StepCache(const symbols::MappingHistory* maps);

  // The entry for `pc` of `pid` at `time`, or null (not kept, or not
  // valid at that time).
  const Entry* Find(uint32_t pid, uint64_t time, uint64_t pc);
  // Keeps `e`, found for `pc` of `pid` at `time`, if it holds from then on;
  // returns it (as kept, or `e` itself), valid until the next call.
  const Entry* Put(uint32_t pid, uint64_t time, uint64_t pc, const Entry& e);

  uint64_t hits() const { return hits_; }

 private:
  struct Slot {
    uint64_t pc = 0;
    uint32_t pid = 0;
    // The history's generation() + 1 when it was put (0: never put): a
    // slot of another generation is empty.
    uint64_t generation = 0;
    Entry entry;
  };
  Slot& SlotOf(uint32_t pid, uint64_t pc) {
    const uint64_t h = (pc ^ (uint64_t{pid} << 40)) * 0x9E3779B97F4A7C15ull;
    return slots_[h >> (64 - kSlotBits)];
  }

  const symbols::MappingHistory* maps_;
  std::unique_ptr<Slot[]> slots_;
  Entry scratch_;
  uint64_t hits_ = 0;
};

}  // namespace pageblame::unwind

#endif  // PAGEBLAME_UNWIND_STEP_CACHE_H_

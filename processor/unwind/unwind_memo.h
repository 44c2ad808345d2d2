// Whole unwinds remembered, and given again when a sample would repeat one
// exactly. A service's calls come from a few call sites, each thread's at
// the same stack depth again and again: the ASP.NET service's 200 k calls
// have 95 distinct stacks. An unwind is a function of what it reads: the
// sample's registers it consults (Get), whether each is known, the stack
// words it reads (with each read's outcome: below or past the copy), and
// the step lookups, which answer the same while the mapping history's
// generation holds and the time is at or after its latest_time() (as
// StepCache). So while one unwinds, the registers consulted (a mask over
// every set the steps use, the callee's and callers' alike: more than
// needed, never less) and the reads (address, outcome, value) are noted;
// a later sample of the same process, pc and sp whose consulted registers
// and known mask are the same, and whose stack gives the same outcome and
// value at every noted address, would take the same steps to the same
// frames: it gets them, and the same counts, without the steps. A check is
// a table slot and a compare per read (~2 a frame) instead of a step cache
// lookup and a rule per frame.
//
//   UnwindMemo memo(&history);
//   if (const UnwindMemo::Entry* e = memo.Find(pid, time, first_regs, mem)) ... e->ips, e->stats
//   ... else unwind with a Recording (regs.Track, mem.Log), then memo.Put(...)
//
// A direct-mapped table of kSlots entries keyed by (pid, pc, sp): a slot
// keeps the last unwind put there (its reads, 24 bytes each, and frames:
// ~1 KiB for the service's 19-frame stacks, ~5 KiB at most, so 1-5 MiB
// for the table at most). Not thread-safe (the unwinder's thread).
#ifndef PAGEBLAME_UNWIND_UNWIND_MEMO_H_
#define PAGEBLAME_UNWIND_UNWIND_MEMO_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "processor/symbols/mapping_history.h"
#include "processor/unwind/register_set.h"
#include "processor/unwind/stack_memory.h"
#include "processor/unwind/unwind_stats.h"

namespace pageblame::unwind {

class UnwindMemo {
 public:
  static constexpr int kSlotBits = 10;
  static constexpr size_t kSlots = size_t{1} << kSlotBits;
  // Unwinds that read more than this are not kept (a stack of ~100 frames
  // and more: its check would cost about its steps, and its slot much).
  static constexpr size_t kMaxReads = 192;

  struct Entry {
    std::vector<uint64_t> ips;
    UnwindStats stats;          // the per-sample counts (UnwindStats::AddSample's)
    uint64_t rule_lookups = 0;  // steps that looked a CFI rule up (cache hits, now)
  };

  // `maps` outlives this (null: none).
  explicit UnwindMemo(const symbols::MappingHistory* maps);

  // What an unwind noted: the registers it consulted, the reads it made.
  struct Recording {
    uint32_t consulted = 0;
    std::vector<StackMemory::LoggedRead> reads;
    void Clear() {
      consulted = 0;
      reads.clear();
    }
  };

  // Whether an unwind at `time` may be kept (and a kept one used).
  bool Usable(uint64_t time) const { return time >= maps_->latest_time(); }
  // The kept unwind of `pid` from `first` (the sample's registers) over
  // `mem`, if it holds for them; null otherwise.
  const Entry* Find(uint32_t pid, uint64_t time, const RegisterSet& first, const StackMemory& mem);
  // Keeps the unwind of `pid` from `first` that noted `rec` and gave `e`
  // (only if Usable(time) and it read at most kMaxReads words).
  void Put(uint32_t pid, uint64_t time, const RegisterSet& first, const Recording& rec,
           const Entry& e);

  uint64_t hits() const { return hits_; }

 private:
  struct Slot {
    uint64_t generation = 0;  // the history's generation() + 1 when put (0: empty)
    uint32_t pid = 0;
    uint64_t pc = 0, sp = 0;
    uint32_t known = 0;      // the first set's known mask
    uint32_t consulted = 0;  // registers whose values follow, in register order
    std::vector<uint64_t> values;
    std::vector<StackMemory::LoggedRead> reads;
    Entry entry;
  };
  Slot& SlotOf(uint32_t pid, uint64_t pc, uint64_t sp) {
    const uint64_t h = (pc ^ (sp * 0xC2B2AE3D27D4EB4Full) ^ (uint64_t{pid} << 40)) * 0x9E3779B97F4A7C15ull;
    return slots_[h >> (64 - kSlotBits)];
  }

  const symbols::MappingHistory* maps_;
  std::unique_ptr<Slot[]> slots_;
  uint64_t hits_ = 0;
};

}  // namespace pageblame::unwind

#endif  // PAGEBLAME_UNWIND_UNWIND_MEMO_H_

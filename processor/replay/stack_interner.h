// The user stack of each memory syscall's enter, interned in the index's
// StackTable on the loader's reading thread: the callchain's user ips for
// frame-pointer recordings, the unwound REGS_USER + STACK_USER copy for
// --call-graph dwarf ones (unwind/unwinder.h).
//
//   StackInterner stacks(&idx.stacks(), unwinder);   // unwinder may be null
//   e.call().stack = stacks.Intern(sample);
//   ... at each FINISHED_ROUND: stacks.FinishedRound();
//   stacks.Finish();   // then replace stacks.aliases() in the index's calls
//
// File order is not time order: perf writes each CPU's ring buffer in turn,
// so the MMAP2 record of a library a thread mapped on one CPU can come
// after that thread's samples from another CPU. A sample whose unwinding
// stops at a pc in no mapping read so far waits, with a copy of its
// registers and stack, for the end of its round (FINISHED_ROUND: by then
// every record older than the round's samples has been read, which is the
// guarantee perf's own ordering rests on), and is unwound again then; its
// call carries a StackTable::Reserve()d id meanwhile. The copies are
// dropped once unwound; at most kMaxWaitingBytes wait at a time (past that,
// the oldest are unwound with what is known).
#ifndef PAGEBLAME_REPLAY_STACK_INTERNER_H_
#define PAGEBLAME_REPLAY_STACK_INTERNER_H_

#include <cstdint>
#include <deque>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "processor/index/stack_table.h"
#include "processor/perf/perf_records.h"
#include "processor/unwind/unwinder.h"

namespace pageblame::replay {

class StackInterner {
 public:
  static constexpr size_t kMaxWaitingBytes = 64 << 20;

  StackInterner(index::StackTable* stacks, unwind::Unwinder* unwinder)
      : stacks_(stacks), unwinder_(unwinder) {}

  StackId Intern(const perf::Sample& s);
  // Every waiting sample is unwound again and its id bound.
  void FinishedRound() { Resolve(waiting_.size()); }
  void Finish() { Resolve(waiting_.size()); }

  // Reserved ids whose stack turned out to be one interned before: id ->
  // that one. The loader replaces them in the index's calls.
  const absl::flat_hash_map<StackId, StackId>& aliases() const { return aliases_; }
  uint64_t waited() const { return waited_; }

 private:
  struct Waiting {
    StackId id;
    perf::EventAttr attr;  // the sample's (its sample_regs_user)
    perf::Sample sample;   // its spans point at the vectors below
    std::vector<uint8_t> regs;
    std::vector<uint8_t> stack;
  };
  // Unwinds the `n` oldest waiting samples with what is known now.
  void Resolve(size_t n);

  index::StackTable* stacks_;
  unwind::Unwinder* unwinder_;
  std::vector<uint64_t> frames_;  // scratch
  std::deque<Waiting> waiting_;
  size_t waiting_bytes_ = 0;
  uint64_t waited_ = 0;
  absl::flat_hash_map<StackId, StackId> aliases_;
};

}  // namespace pageblame::replay

#endif  // PAGEBLAME_REPLAY_STACK_INTERNER_H_

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
// the oldest are unwound with what is known). Where the record can be read
// again (a file-mode trace, outside COMPRESSED data: Reread), only its
// place in the file waits, and it is read again when its round ends: a
// dwarf recording whose first round holds seconds of another CPU's samples
// then costs ~50 bytes per waiting sample instead of its 8-16 KiB copy.
#ifndef PAGEBLAME_REPLAY_STACK_INTERNER_H_
#define PAGEBLAME_REPLAY_STACK_INTERNER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "processor/index/stack_table.h"
#include "processor/perf/perf_records.h"
#include "processor/unwind/unwinder.h"

namespace pageblame::replay {

class StackInterner {
 public:
  static constexpr size_t kMaxWaitingBytes = 64 << 20;

  // Parses the sample of a record read before (the RawRecord Intern was
  // given) into `out`; false if it cannot be read again.
  using Reread = std::function<bool(const perf::RawRecord& seen, perf::Sample* out)>;

  StackInterner(index::StackTable* stacks, unwind::Unwinder* unwinder, Reread reread = nullptr)
      : stacks_(stacks), unwinder_(unwinder), reread_(std::move(reread)) {}

  // `rec`: the sample's record if Reread can read it again, else null (its
  // registers and stack are then copied if it must wait).
  StackId Intern(const perf::Sample& s, const perf::RawRecord* rec = nullptr);
  // Every waiting sample is unwound again and its id bound.
  void FinishedRound() { Resolve(waiting_.size()); }
  void Finish() { Resolve(waiting_.size()); }

  // Reserved ids whose stack turned out to be one interned before: id ->
  // that one. The loader replaces them in the index's calls.
  const absl::flat_hash_map<StackId, StackId>& aliases() const { return aliases_; }
  // The id the calls carrying `s` are to take: its alias's, or `s`.
  StackId Resolved(StackId s) const {
    auto a = aliases_.find(s);
    return a == aliases_.end() ? s : a->second;
  }

  // Thinning the stack table in memory (the recorder: LoadPass), once every
  // holder of an alias took its Resolved() id: the reserved ids of the
  // samples still waiting (each to keep: it is bound later) ...
  template <typename Fn>
  void ForEachWaiting(Fn fn) const {
    for (const Waiting& w : waiting_) fn(w.id);
  }
  // ... renumbered as the table was (StackTable::Thin); the aliases,
  // applied everywhere, are forgotten.
  void Renumbered(const index::StackTable::Kept& k);
  uint64_t waited() const { return waited_; }
  // Of those, how many waited as a place in the file (read again), and how
  // many bytes of stack copies waited at most at one time.
  uint64_t reread() const { return reread_count_; }
  // Records that could not be read again (the file changed under us): their
  // stacks are empty.
  uint64_t reread_failed() const { return reread_failed_; }
  size_t max_waiting_bytes() const { return max_waiting_bytes_; }

 private:
  // A sample held with a copy of what unwinding reads. The stack copy is
  // kept zstd-compressed (fast level -3: a 16 KiB copy is mostly zeros and
  // repeated return addresses, ~10x smaller): a -z recording's round can
  // hold seconds of another CPU's samples, and every one that fits under
  // kMaxWaitingBytes keeps its whole stack.
  struct Copied {
    perf::EventAttr attr;  // the sample's (its sample_regs_user)
    perf::Sample sample;   // its spans point at regs and at the scratch stack
    std::vector<uint8_t> regs;
    std::vector<uint8_t> packed_stack;  // the stack, zstd-compressed unless !compressed
    size_t stack_size = 0;
    // False if zstd failed and packed_stack is the stack as it was (its size
    // alone cannot tell: a compressed copy may be exactly as long).
    bool compressed = false;
  };
  struct Waiting {
    StackId id;
    perf::RawRecord record;            // to read again (bytes empty); or
    std::unique_ptr<Copied> copied;    // its copy
  };
  // Bytes a waiting sample holds.
  static size_t Held(const Waiting& w);
  void Hold(const perf::Sample& s, Waiting* w);
  // The held sample with its stack unpacked into stack_ (until the next call).
  const perf::Sample& Unpack(Copied& c);
  // Unwinds the `n` oldest waiting samples with what is known now.
  void Resolve(size_t n);

  index::StackTable* stacks_;
  unwind::Unwinder* unwinder_;
  Reread reread_;
  perf::Sample reread_sample_;     // scratch
  std::vector<uint8_t> stack_;     // scratch: an unpacked stack copy
  std::vector<uint64_t> frames_;  // scratch
  std::deque<Waiting> waiting_;
  size_t waiting_bytes_ = 0;
  uint64_t waited_ = 0;
  uint64_t reread_count_ = 0;
  uint64_t reread_failed_ = 0;
  size_t max_waiting_bytes_ = 0;
  absl::flat_hash_map<StackId, StackId> aliases_;
};

}  // namespace pageblame::replay

#endif  // PAGEBLAME_REPLAY_STACK_INTERNER_H_

// The user stack perf copied with a sample (PERF_SAMPLE_STACK_USER): the
// bytes at [sp, sp + size) of the thread at the sample. The unwinder reads
// saved registers and return addresses from it; every read is checked, and
// says why it failed: below sp (no such copy: a bad address) or past the
// copy's end (the stack was deeper than the copy).
//
//   StackMemory mem(sp, sample.user_stack);
//   uint64_t ra;
//   if (mem.Read(cfa - 8, &ra) == StackMemory::kOk) ...
#ifndef PAGEBLAME_UNWIND_STACK_MEMORY_H_
#define PAGEBLAME_UNWIND_STACK_MEMORY_H_

#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/types/span.h"

namespace pageblame::unwind {

class StackMemory {
 public:
  enum Result { kOk, kBelowCopy, kPastCopy };

  StackMemory(uint64_t base, absl::Span<const uint8_t> bytes) : base_(base), bytes_(bytes) {}

  // Reads the 8 bytes at `addr` (unaligned is fine).
  Result Read(uint64_t addr, uint64_t* out) const {
    const Result r = ReadUnlogged(addr, out);
    if (log_ != nullptr) log_->push_back({addr, r == kOk ? *out : 0, r});
    return r;
  }
  // A read as the unwind memo notes it (unwind_memo.h): the value is 0
  // unless the read was kOk.
  struct LoggedRead {
    uint64_t addr;
    uint64_t value;
    Result result;
  };
  // From now on every Read is appended to *log (null: none).
  void Log(std::vector<LoggedRead>* log) { log_ = log; }
  uint64_t base() const { return base_; }
  uint64_t end() const { return base_ + bytes_.size(); }
  bool Contains(uint64_t addr) const { return addr >= base_ && addr - base_ < bytes_.size(); }

 private:
  Result ReadUnlogged(uint64_t addr, uint64_t* out) const {
    if (addr < base_) return kBelowCopy;
    const uint64_t off = addr - base_;
    if (off > bytes_.size() || bytes_.size() - off < 8) return kPastCopy;
    std::memcpy(out, bytes_.data() + off, 8);
    return kOk;
  }

  uint64_t base_;
  absl::Span<const uint8_t> bytes_;
  std::vector<LoggedRead>* log_ = nullptr;
};

}  // namespace pageblame::unwind

#endif  // PAGEBLAME_UNWIND_STACK_MEMORY_H_

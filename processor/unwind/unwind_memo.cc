#include "processor/unwind/unwind_memo.h"

#include "absl/numeric/bits.h"

namespace pageblame::unwind {

UnwindMemo::UnwindMemo(const symbols::MappingHistory* maps) : maps_(maps) {
  static const symbols::MappingHistory kNoMappings;
  if (maps_ == nullptr) maps_ = &kNoMappings;
}

const UnwindMemo::Entry* UnwindMemo::Find(uint32_t pid, uint64_t time, const RegisterSet& first,
                                          const StackMemory& mem) {
  if (slots_ == nullptr || !Usable(time)) return nullptr;
  const uint64_t pc = first.pc(), sp = first.sp();
  const Slot& s = SlotOf(pid, pc, sp);
  if (s.generation != maps_->generation() + 1 || s.pid != pid || s.pc != pc || s.sp != sp ||
      s.known != first.known_mask()) {
    return nullptr;
  }
  size_t i = 0;
  for (uint32_t left = s.consulted; left != 0; left &= left - 1, ++i) {
    uint64_t v = 0;
    first.Get(absl::countr_zero(left), &v);  // known: the masks are equal
    if (v != s.values[i]) return nullptr;
  }
  for (const StackMemory::LoggedRead& r : s.reads) {
    uint64_t v = 0;
    const StackMemory::Result got = mem.Read(r.addr, &v);
    if (got != r.result || (got == StackMemory::kOk && v != r.value)) return nullptr;
  }
  ++hits_;
  return &s.entry;
}

void UnwindMemo::Put(uint32_t pid, uint64_t time, const RegisterSet& first, const Recording& rec,
                     const Entry& e) {
  if (!Usable(time) || rec.reads.size() > kMaxReads) return;
  if (slots_ == nullptr) slots_ = std::make_unique<Slot[]>(kSlots);
  Slot& s = SlotOf(pid, first.pc(), first.sp());
  s.generation = maps_->generation() + 1;
  s.pid = pid;
  s.pc = first.pc();
  s.sp = first.sp();
  s.known = first.known_mask();
  // Only the known registers' values can have been consulted (Get of an
  // unknown one fails, which the known mask decides).
  s.consulted = rec.consulted & s.known;
  s.values.clear();
  for (uint32_t left = s.consulted; left != 0; left &= left - 1) {
    uint64_t v = 0;
    first.Get(absl::countr_zero(left), &v);
    s.values.push_back(v);
  }
  s.reads = rec.reads;
  s.entry = e;
}

}  // namespace pageblame::unwind

// How TraceIndex keeps a CallEvent in memory: 68 bytes instead of its 104.
// A service's recording holds millions of calls (one per distinct stack on
// bench/stacks.sh), so the call table is most of an index's memory.
//
// Packing is exact or refused: a call whose values do not all fit is kept
// whole elsewhere (TraceIndex's table of unpacked calls), so every call reads
// back as it was added. What fits:
//   - first_time and last_time as ns before and after `time` (32 and 24
//     bits: a call that took over ~4.3 s, or whose exit's duplicate came
//     over ~16 ms late, or with no enter time (0), does not fit);
//   - args[1..5] as their low 32 bits, when the high 32 are all zeros or
//     all ones (a bit each says which): lengths and offsets under 4 GiB,
//     prot, flags, an fd or -1 however the caller extended it, and the zeros
//     of the args a syscall does not have (a 256 GiB reservation, or a
//     raw_syscalls enter's leftover registers, does not fit); args[0] (an
//     address), time and ret whole.
//
//   CallRecord r;
//   if (CallRecord::Pack(ev, &r)) { ... r.Unpack() == ev, field by field ... }
//   else { keep ev whole; r = CallRecord::Unpacked(); }
#ifndef PAGEBLAME_INDEX_CALL_RECORD_H_
#define PAGEBLAME_INDEX_CALL_RECORD_H_

#include <cstdint>

#include "processor/index/timeline_types.h"

namespace pageblame::index {

class CallRecord {
 public:
  // Packs `e` into `out`; false, with `out` untouched, when it does not fit.
  static bool Pack(const CallEvent& e, CallRecord* out);
  // The record of a call kept whole elsewhere.
  static CallRecord Unpacked();

  // False for Unpacked(): the call is not here.
  bool packed() const { return first_before_ != kUnpacked; }
  // The call, exactly as packed. Only if packed().
  CallEvent Unpack() const;

 private:
  static constexpr uint32_t kUnpacked = ~uint32_t{0};
  // 4-byte words only (the 64-bit values split in halves): no padding, and
  // 4-byte alignment, so a 2 MiB block holds 68-byte records back to back.
  uint32_t time_[2] = {0, 0};
  uint32_t ret_[2] = {0, 0};
  uint32_t arg0_[2] = {0, 0};
  uint32_t args_[5] = {0, 0, 0, 0, 0};  // args[1..5], their low halves
  uint32_t pid_ = 0;
  uint32_t tid_ = 0;
  uint32_t stack_ = 0;
  uint32_t comm_ = 0;
  uint32_t first_before_ = kUnpacked;  // time - first_time
  // (last_time - time) << 8 | ones << 3 | syscall, where bit a-1 of `ones`
  // says args[a]'s high half is all ones.
  uint32_t last_after_ones_syscall_ = 0;
};

static_assert(sizeof(CallRecord) == 68, "a call in memory: see bench/HISTORY.md before growing it");

}  // namespace pageblame::index

#endif  // PAGEBLAME_INDEX_CALL_RECORD_H_

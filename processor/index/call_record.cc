#include "processor/index/call_record.h"

namespace pageblame::index {
namespace {

constexpr uint32_t kMaxLastAfter = (uint32_t{1} << 24) - 1;

void Split(uint64_t v, uint32_t out[2]) {
  out[0] = static_cast<uint32_t>(v);
  out[1] = static_cast<uint32_t>(v >> 32);
}

uint64_t Join(const uint32_t in[2]) { return uint64_t{in[0]} | uint64_t{in[1]} << 32; }

// `v` as its low 32 bits, when its high 32 are all zeros or all ones
// (`ones` says which): an int passed in a 64-bit register is either, as the
// caller's code loaded it (glibc's mmap passes fd -1 as 0xffffffff).
bool Narrow(uint64_t v, uint32_t* low, bool* ones) {
  const auto high = static_cast<uint32_t>(v >> 32);
  if (high != 0 && high != ~uint32_t{0}) return false;
  *low = static_cast<uint32_t>(v);
  *ones = high != 0;
  return true;
}

}  // namespace

bool CallRecord::Pack(const CallEvent& e, CallRecord* out) {
  // A first_time of 0 (no enter) does not fit: time - 0 is over 32 bits on
  // any real clock, and a clock that small is kept whole all the same.
  if (e.first_time == 0 || e.first_time > e.time || e.time - e.first_time >= kUnpacked) return false;
  if (e.last_time < e.time || e.last_time - e.time > kMaxLastAfter) return false;
  const auto syscall = static_cast<uint8_t>(e.syscall);
  if (syscall >= 8) return false;  // not a syscall: the codec refuses it, the replay makes none
  CallRecord r;
  uint32_t ones = 0;
  for (int a = 1; a < 6; ++a) {
    bool high = false;
    if (!Narrow(e.args[a], &r.args_[a - 1], &high)) return false;
    ones |= uint32_t{high} << (a - 1);
  }
  Split(e.time, r.time_);
  Split(static_cast<uint64_t>(e.ret), r.ret_);
  Split(e.args[0], r.arg0_);
  r.pid_ = e.pid;
  r.tid_ = e.tid;
  r.stack_ = e.stack.value();
  r.comm_ = e.comm.value();
  r.first_before_ = static_cast<uint32_t>(e.time - e.first_time);
  r.last_after_ones_syscall_ = static_cast<uint32_t>(e.last_time - e.time) << 8 | ones << 3 | syscall;
  *out = r;
  return true;
}

CallRecord CallRecord::Unpacked() { return CallRecord(); }

CallEvent CallRecord::Unpack() const {
  CallEvent e;
  e.time = Join(time_);
  e.first_time = e.time - first_before_;
  e.last_time = e.time + (last_after_ones_syscall_ >> 8);
  e.pid = pid_;
  e.tid = tid_;
  e.syscall = static_cast<decode::Syscall>(last_after_ones_syscall_ & 7);
  e.args[0] = Join(arg0_);
  for (int a = 1; a < 6; ++a) {
    const bool ones = (last_after_ones_syscall_ >> (3 + a - 1) & 1) != 0;
    e.args[a] = uint64_t{args_[a - 1]} | (ones ? uint64_t{~uint32_t{0}} << 32 : 0);
  }
  e.ret = static_cast<int64_t>(Join(ret_));
  e.stack = StackId(stack_);
  e.comm = StringId(comm_);
  return e;
}

}  // namespace pageblame::index

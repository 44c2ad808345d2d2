#include "processor/replay/stack_interner.h"

#include "processor/decode/callchain.h"

namespace pageblame::replay {

StackId StackInterner::Intern(const perf::Sample& s) {
  // Interned here, on the reading thread, while the chain (or the stack
  // copy) is still in its cache: a hash and a compare per call, against
  // handing ~300 bytes of frames per call to the replay thread (a copy, its
  // buffers' page faults, and a second pass over cold lines there).
  absl::Span<const uint64_t> user = decode::UserFrames(s.callchain, &frames_);
  // --call-graph dwarf: the kernel's chain stops at the user boundary
  // (exclude_callchain_user); the user part is in the copy. A chain with
  // user ips of its own is taken as it is.
  if (!user.empty() || unwinder_ == nullptr || !(s.attr->sample_type & perf::kSampleStackUser)) {
    return stacks_->Intern(user);
  }
  if (unwinder_->Unwind(s, &frames_, /*may_wait=*/true) == unwind::Unwinder::Result::kDone) {
    return stacks_->Intern(frames_, /*unwound=*/true);
  }
  Waiting& w = waiting_.emplace_back();
  w.id = stacks_->Reserve();
  w.attr = *s.attr;
  w.sample = s;
  w.regs.assign(s.user_regs.begin(), s.user_regs.end());
  w.stack.assign(s.user_stack.begin(), s.user_stack.end());
  w.sample.attr = &w.attr;
  w.sample.user_regs = w.regs;
  w.sample.user_stack = w.stack;
  w.sample.callchain = {};
  w.sample.raw = {};
  ++waited_;
  waiting_bytes_ += w.stack.size() + w.regs.size();
  const StackId id = w.id;
  // Bounded memory: past the limit the oldest are unwound as they are.
  while (waiting_bytes_ > kMaxWaitingBytes && !waiting_.empty()) Resolve(1);
  return id;
}

void StackInterner::Resolve(size_t n) {
  for (; n > 0 && !waiting_.empty(); --n) {
    Waiting& w = waiting_.front();
    unwinder_->Unwind(w.sample, &frames_);
    const StackId bound = stacks_->Bind(w.id, frames_);
    if (bound != w.id) aliases_[w.id] = bound;
    waiting_bytes_ -= w.stack.size() + w.regs.size();
    waiting_.pop_front();
  }
}

}  // namespace pageblame::replay

#include "processor/replay/stack_interner.h"

#include <zstd.h>

#include <algorithm>

#include "processor/decode/callchain.h"

namespace pageblame::replay {

StackId StackInterner::Intern(const perf::Sample& s, const perf::RawRecord* rec) {
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
  if (rec != nullptr && reread_ != nullptr) {
    w.record = *rec;
    w.record.bytes = absl::Span<const uint8_t>(nullptr, rec->bytes.size());
  } else {
    Hold(s, &w);
  }
  ++waited_;
  waiting_bytes_ += Held(w);
  max_waiting_bytes_ = std::max(max_waiting_bytes_, waiting_bytes_);
  const StackId id = w.id;
  // Bounded memory: past the limit the oldest are unwound as they are.
  while (waiting_bytes_ > kMaxWaitingBytes && !waiting_.empty()) Resolve(1);
  return id;
}

void StackInterner::Renumbered(const index::StackTable::Kept& k) {
  for (Waiting& w : waiting_) w.id = StackId(k.stacks[w.id.value()]);
  absl::flat_hash_map<StackId, StackId>().swap(aliases_);  // clear() keeps the capacity
}

void StackInterner::Hold(const perf::Sample& s, Waiting* w) {
  w->copied = std::make_unique<Copied>();
  Copied& c = *w->copied;
  c.attr = *s.attr;
  c.sample = s;
  c.regs.assign(s.user_regs.begin(), s.user_regs.end());
  c.stack_size = s.user_stack.size();
  c.packed_stack.resize(ZSTD_compressBound(c.stack_size));
  const size_t packed = ZSTD_compress(c.packed_stack.data(), c.packed_stack.size(),
                                      s.user_stack.data(), c.stack_size, -3);
  c.compressed = !ZSTD_isError(packed);
  if (c.compressed) {
    c.packed_stack.resize(packed);
    c.packed_stack.shrink_to_fit();
  } else {
    c.packed_stack.assign(s.user_stack.begin(), s.user_stack.end());  // kept as it is
  }
  c.sample.attr = &c.attr;
  c.sample.user_regs = c.regs;
  c.sample.user_stack = {};
  c.sample.callchain = {};
  c.sample.raw = {};
}

const perf::Sample& StackInterner::Unpack(Copied& c) {
  stack_.resize(c.stack_size);
  if (!c.compressed) {
    stack_.assign(c.packed_stack.begin(), c.packed_stack.end());
  } else {
    const size_t n = ZSTD_decompress(stack_.data(), stack_.size(), c.packed_stack.data(),
                                     c.packed_stack.size());
    if (ZSTD_isError(n) || n != c.stack_size) stack_.clear();  // our own bytes: cannot happen
  }
  c.sample.user_stack = stack_;
  return c.sample;
}

size_t StackInterner::Held(const Waiting& w) {
  if (w.copied == nullptr) return sizeof(Waiting);
  return sizeof(Waiting) + sizeof(Copied) + w.copied->packed_stack.size() + w.copied->regs.size();
}

void StackInterner::Resolve(size_t n) {
  for (; n > 0 && !waiting_.empty(); --n) {
    Waiting& w = waiting_.front();
    if (w.copied != nullptr) {
      unwinder_->Unwind(Unpack(*w.copied), &frames_);
    } else if (reread_(w.record, &reread_sample_)) {
      ++reread_count_;
      unwinder_->Unwind(reread_sample_, &frames_);
    } else {
      frames_.clear();  // read once, unreadable now: the file changed under us
      ++reread_failed_;
    }
    const StackId bound = stacks_->Bind(w.id, frames_);
    if (bound != w.id) aliases_[w.id] = bound;
    waiting_bytes_ -= Held(w);
    waiting_.pop_front();
  }
}

}  // namespace pageblame::replay

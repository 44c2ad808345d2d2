// For tests that change a sample's bytes: its attr, registers and stack copy
// owned here, so they outlive the reader's buffer and can be edited.
//
//   OwnedSample s(sample);        // a copy of a sample read from a trace
//   s.stack[8] ^= 1;              // s.sample sees the change
//   unwinder.Unwind(s.sample, &ips);
#ifndef PAGEBLAME_UNWIND_OWNED_SAMPLE_FOR_TEST_H_
#define PAGEBLAME_UNWIND_OWNED_SAMPLE_FOR_TEST_H_

#include <cstdint>
#include <vector>

#include "processor/perf/perf_records.h"

namespace pageblame::unwind {

struct OwnedSample {
  perf::EventAttr attr;
  std::vector<uint8_t> regs, stack;
  perf::Sample sample;

  explicit OwnedSample(const perf::Sample& s) : attr(*s.attr), sample(s) {
    regs.assign(s.user_regs.begin(), s.user_regs.end());
    stack.assign(s.user_stack.begin(), s.user_stack.end());
    Repoint();
  }
  OwnedSample(const OwnedSample& o) : attr(o.attr), regs(o.regs), stack(o.stack), sample(o.sample) {
    Repoint();
  }
  // The sample's spans point at this copy's bytes (and at no callchain or raw data).
  void Repoint() {
    sample.attr = &attr;
    sample.user_regs = regs;
    sample.user_stack = stack;
    sample.callchain = {};
    sample.raw = {};
  }
};

}  // namespace pageblame::unwind

#endif  // PAGEBLAME_UNWIND_OWNED_SAMPLE_FOR_TEST_H_

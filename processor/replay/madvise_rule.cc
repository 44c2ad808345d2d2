// madvise: changes no prot and no region; the call enters the history of
// the pages it advised (MADV_DONTNEED and friends release their contents).
#include "processor/replay/call_rules.h"

namespace pageblame::replay {

void ApplyMadvise(CallContext& c) {
  if (c.ret != 0) {
    ++c.stats().calls_failed;
    return;
  }
  const uint64_t start = c.args()[0];
  const uint64_t end = start + PageUp(c.args()[1]);
  if (c.as.Peek(start, end).empty()) {  // nothing the trace knows is there
    ++c.stats().calls_no_change;
    return;
  }
  const EventId ev = c.record();
  c.idx.mutable_process(c.process).advice.push_back(index::Advice{start, end, c.time, ev});
}

}  // namespace pageblame::replay

// brk: the first answer is the initial break; growth creates the new pages
// with this call's stack (each growth keeps its own), shrink removes them.
#include <sys/mman.h>

#include "processor/replay/call_rules.h"

namespace pageblame::replay {
namespace {

// The first brk the trace sees: it only tells the break (or, in attach mode,
// the break at the time the trace began).
void FirstBreak(CallContext& c, uint64_t now) {
  ProcessTable::ProcState& ps = c.proc;
  ps.brk_known = true;
  ps.brk = now;
  index::Process& proc = c.idx.mutable_process(c.process);
  if (c.args()[0] != 0 && proc.existed_before_trace && !proc.unknown_break_event.valid()) {
    // Attached without -d: this call moved the break from a value the trace
    // never saw, so which heap pages it made cannot be known. Remember it so
    // answers about the heap can say so.
    proc.unknown_break_event = c.record();
    return;
  }
  ++c.stats().calls_no_change;
}

}  // namespace

void ApplyBrk(CallContext& c) {
  // brk returns the new break, or the old one when it refuses.
  const uint64_t now = static_cast<uint64_t>(c.ret);
  ProcessTable::ProcState& ps = c.proc;
  if (!ps.brk_known) {
    FirstBreak(c, now);
    return;
  }
  const uint64_t old_end = PageUp(ps.brk), new_end = PageUp(now);
  ps.brk = now;
  if (new_end == old_end) {
    const uint64_t asked = c.args()[0];
    ++(asked != 0 && now != asked ? c.stats().calls_failed : c.stats().calls_no_change);
    return;
  }
  const EventId ev = c.record();
  if (new_end > old_end) {
    index::RegionAttrs attrs;
    attrs.prot = PROT_READ | PROT_WRITE;
    attrs.flags = MAP_PRIVATE | MAP_ANONYMOUS;
    attrs.path = c.heap_name;
    c.as.Map(old_end, new_end, c.time, ev, attrs);
  } else {
    c.as.Remove(new_end, old_end, c.time, index::End::kUnmapped, ev);
  }
}

}  // namespace pageblame::replay

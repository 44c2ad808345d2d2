// mprotect and pkey_mprotect: set the prot of whole pages, splitting regions
// where the kernel splits VMAs. A page made accessible after PROT_NONE gets
// this call as its commit; one made PROT_NONE loses its commit (decommit).
#include <sys/mman.h>

#include <cerrno>

#include "processor/replay/call_check.h"
#include "processor/replay/call_rules.h"

namespace pageblame::replay {

void ApplyMprotect(CallContext& c) {
  const uint64_t start = c.args()[0];
  const uint64_t end = start + PageUp(c.args()[1]);
  // PROT_GROWSDOWN/GROWSUP widen the range to the VMA's edge: not modelled,
  // the RWX bits are what is replayed.
  const uint32_t prot = static_cast<uint32_t>(c.args()[2]) & (PROT_READ | PROT_WRITE | PROT_EXEC);
  uint64_t until = end;
  if (c.ret == -ENOMEM && !IsUserRange(start, c.args()[1])) {
    // A range that wraps or leaves user space: refused before any change
    // (and its end above would have wrapped).
    until = start;
  } else if (c.ret == -ENOMEM) {
    // The range ran into a hole: the kernel (do_mprotect_pkey) changed the
    // VMAs before the hole, then failed.
    until = c.as.MappedPrefixEnd(start, end);
  } else if (c.ret != 0) {
    until = start;
  }
  if (until == start) {
    ++c.stats().calls_failed;
    return;
  }
  // Attached with -d, perf reported every mapping that was readable or
  // executable: one it did not was PROT_NONE (synthetic-events.c skips
  // those), and this call commits it.
  const bool unseen_were_none =
      c.stats().data_mappings && c.idx.process(c.process).existed_before_trace;
  if (!c.as.Protect(start, until, c.time, c.record, prot, unseen_were_none)) {
    ++c.stats().calls_no_change;
  }
}

}  // namespace pageblame::replay

// The replay rules of the memory syscalls (docs/replay.md, "Rules"): one
// handler per syscall family, each in its own file, found through a table
// indexed by decode::Syscall. A handler gets one completed call (its enter's
// arguments and its exit's return value) and applies it to the caller's
// process: it changes the address space and records the call in the index
// only if the call changed something, and counts failures and no-ops.
//
//   CallContext c{call, ret, time, tid, process, idx, as, proc, heap_name, record};
//   RuleFor(call.enter.syscall)(c);
#ifndef PAGEBLAME_REPLAY_CALL_RULES_H_
#define PAGEBLAME_REPLAY_CALL_RULES_H_

#include <cstdint>

#include "absl/functional/function_ref.h"
#include "processor/index/trace_index.h"
#include "processor/replay/address_space.h"
#include "processor/replay/process_table.h"
#include "processor/replay/syscall_pairer.h"

namespace pageblame::replay {

struct CallContext {
  const SyscallPairer::Pending& call;  // the enter (args in call.enter.call())
  int64_t ret;                         // the exit's return value
  uint64_t time;                       // the exit's: the change is visible from then on
  uint32_t tid;
  uint32_t process;                    // the index's process the call applies to
  index::TraceIndex& idx;
  AddressSpace& as;
  ProcessTable::ProcState& proc;
  StringId heap_name;                  // "[heap]", the path of brk's pages
  // Adds the call to the index and returns its id; call it at most once.
  absl::FunctionRef<EventId()> record;

  const uint64_t* args() const { return call.enter.call().args; }
  index::TraceStats& stats() const { return idx.mutable_stats(); }
};

using CallRule = void (*)(CallContext& c);

void ApplyMmap(CallContext& c);      // mmap_rule.cc
void ApplyMunmap(CallContext& c);    // munmap_rule.cc
void ApplyBrk(CallContext& c);       // brk_rule.cc
void ApplyMremap(CallContext& c);    // mremap_rule.cc
void ApplyMprotect(CallContext& c);  // protect_rule.cc: mprotect and pkey_mprotect
void ApplyMadvise(CallContext& c);   // madvise_rule.cc

// The handler of `syscall` (never null for a syscall below kCount).
CallRule RuleFor(decode::Syscall syscall);

// Page arithmetic every rule shares.
inline constexpr uint64_t kPage = 4096;
inline uint64_t PageUp(uint64_t x) { return (x + kPage - 1) & ~(kPage - 1); }
inline uint64_t PageDown(uint64_t x) { return x & ~(kPage - 1); }

}  // namespace pageblame::replay

#endif  // PAGEBLAME_REPLAY_CALL_RULES_H_

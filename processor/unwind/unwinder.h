// Unwinds the user stack of a --call-graph dwarf sample (its REGS_USER and
// STACK_USER copy) into a leaf-first list of ips, like the ones the kernel
// writes for frame-pointer call chains: the sample's pc, then each caller's
// return address. What perf's unwind-libdw.c does with libdwfl, here with
// libdw's CFI readers under our own small step (frame_rule.h):
//
// - a frame in an ELF file with CFI (.eh_frame, .debug_frame) steps by its
//   rule, computed once per (module, pc) and cached (rule_cache.h); the
//   mapping, module and rule of a (pid, pc) are kept too while they hold
//   (step_cache.h), so a step is mostly one hash lookup and the rule;
// - a sample that would repeat an unwind kept (the same process, pc, sp,
//   registers consulted and stack words read) gets its frames without
//   the steps (unwind_memo.h): a service's calls repeat a few stacks;
// - a frame with no CFI there (JIT code of V8, .NET or the JVM, which keep
//   frame pointers; V8's builtins embedded in the node binary; a file that
//   was not found, or is not ELF, like .NET's ReadyToRun .dll images) steps
//   by the frame pointer while [rbp] is in the copied stack;
// - it stops at the outermost frame, at a pc in no known mapping, where the
//   stack copy ends, or at a frame that is not above its callee, and counts
//   why (UnwindStats).
//
//   options.mappings = &history;   // the trace's (symbols/mapping_history.h)
//   Unwinder u(options);
//   std::vector<uint64_t> ips;
//   u.Unwind(sample, &ips);        // then intern ips like a callchain
//
// Nothing of the sample is kept: its registers and stack are read in place.
// Not thread-safe; the loader's reading thread owns it.
#ifndef PAGEBLAME_UNWIND_UNWINDER_H_
#define PAGEBLAME_UNWIND_UNWINDER_H_

#include <cstdint>
#include <vector>

#include "processor/perf/perf_records.h"
#include "processor/symbols/dso_locator.h"
#include "processor/unwind/module_map.h"
#include "processor/unwind/register_set.h"
#include "processor/unwind/rule_cache.h"
#include "processor/unwind/stack_memory.h"
#include "processor/unwind/step_cache.h"
#include "processor/unwind/unwind_memo.h"
#include "processor/unwind/unwind_stats.h"

namespace pageblame::unwind {

class Unwinder {
 public:
  struct Options {
    symbols::DsoLocator::Options locator;  // where ELF files are found
    // The trace's mapping history (outlives the unwinder; null: none),
    // filled on the thread that calls Unwind (ModuleMap).
    const symbols::MappingHistory* mappings = nullptr;
    bool x86_64 = true;                    // the trace's arch (FileInfo::arch)
    // perf's default --max-stack is 127; deep JIT stacks go further.
    size_t max_frames = 512;
    bool timed = false;  // measure the time spent (UnwindStats::nanos)
    // Remember whole unwinds and give them again to samples that would
    // repeat one exactly (unwind_memo.h); off: every sample is stepped
    // (the tests compare both).
    bool memo = true;
    ModuleMap::OnOpened on_module_opened;  // see ModuleMap
  };

  explicit Unwinder(Options options);

  const ModuleMap& modules() const { return modules_; }

  enum class Result {
    kDone,
    // The stack stopped at a pc in no mapping read so far, and the caller
    // said it may wait: nothing was counted, and the sample may be unwound
    // again once later records are in (ModuleMap: file order is not time
    // order).
    kMayWait,
  };
  // Replaces `ips` with the sample's user frames, leaf first; empty if the
  // sample has no usable registers. Never fails: a stack that cannot be
  // followed to its end keeps the frames found so far.
  Result Unwind(const perf::Sample& sample, std::vector<uint64_t>* ips, bool may_wait = false);

  UnwindStats stats() const;
  // Samples whose unwind the memo gave (unwind_memo.h).
  uint64_t memo_hits() const { return memo_.hits(); }

 private:
  // How a step went: on to the caller (by which method), or why not.
  enum class Outcome { kCfi, kFramePointer, kEnd, kNoModule, kNoCfi, kStackEnd, kBadRead };
  // One step from `regs` (whose pc is exact for the first frame and after a
  // signal frame, else a return address) to its caller.
  Outcome Step(const perf::Sample& sample, const StackMemory& mem, bool exact_pc,
               const RegisterSet& regs, RegisterSet* caller, bool* signal_frame, UnwindStats* d);
  // What a step at `pc` of the sample's process needs: its code and rule,
  // from the step cache or looked up (and kept there).
  const StepCache::Entry& Lookup(uint32_t pid, uint64_t time, uint64_t pc);
  // The frame pointer step: the caller's pc at [rbp + 8], its rbp at [rbp],
  // its sp at rbp + 16.
  static StepStatus FramePointerStep(const RegisterSet& regs, const StackMemory& mem,
                                     RegisterSet* caller);
  // The sample's unwind from its registers (sets[0]; sets[1] is scratch,
  // both changed): the memo's if it holds, else unwound and kept there;
  // counts into `d`.
  void RecallOrUnwind(const perf::Sample& sample, RegisterSet sets[2], std::vector<uint64_t>* ips,
                      UnwindStats* d);
  // The steps from the sample's registers over its stack copy `mem`.
  void UnwindFrom(const perf::Sample& sample, const StackMemory& mem, RegisterSet sets[2],
                  std::vector<uint64_t>* ips, UnwindStats* d);

  Options options_;
  ModuleMap modules_;
  RuleCache rules_;
  StepCache steps_;
  UnwindMemo memo_;
  UnwindMemo::Recording recording_;  // scratch: what the unwind being kept noted
  UnwindMemo::Entry kept_;           // scratch: what it gave
  uint64_t rule_hits_by_steps_ = 0;  // rule lookups the step cache answered
  uint64_t rule_lookups_ = 0;        // steps that looked a CFI rule up
  UnwindStats stats_;
};

}  // namespace pageblame::unwind

#endif  // PAGEBLAME_UNWIND_UNWINDER_H_

#include "processor/unwind/unwinder.h"

#include <chrono>
#include <utility>

#include "processor/unwind/sample_registers.h"

namespace pageblame::unwind {
namespace {

// The step's failure as the reason the unwind stopped.
constexpr bool IsReadFailure(StepStatus s) {
  return s == StepStatus::kBelowCopy || s == StepStatus::kPastCopy;
}

}  // namespace

Unwinder::Unwinder(Options options)
    : options_(std::move(options)),
      modules_(options_.locator, options_.mappings, options_.on_module_opened),
      steps_(options_.mappings),
      memo_(options_.mappings) {}

Unwinder::Result Unwinder::Unwind(const perf::Sample& sample, std::vector<uint64_t>* ips,
                                  bool may_wait) {
  ips->clear();
  // The first frame's registers, and its caller's: UnwindFrom steps from
  // one to the other in turn.
  RegisterSet sets[2];
  switch (ReadSampleRegisters(sample, options_.x86_64, &sets[0])) {
    case RegsResult::kOk:
      break;
    case RegsResult::kNone:
      ++stats_.no_registers;
      return Result::kDone;
    case RegsResult::kOtherAbi:
      ++stats_.other_abi;
      return Result::kDone;
    case RegsResult::kMaskLacksIpSp:
      ++stats_.mask_lacks_ip_sp;
      return Result::kDone;
  }
  UnwindStats d;
  d.samples = 1;
  if (!options_.timed) {
    RecallOrUnwind(sample, sets, ips, &d);
  } else {
    const auto t0 = std::chrono::steady_clock::now();
    RecallOrUnwind(sample, sets, ips, &d);
    stats_.nanos += std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now() - t0).count();
  }
  if (may_wait && d.stop_no_module) return Result::kMayWait;
  stats_.AddSample(d);
  if (sample.user_copy_error != perf::UserCopyError::kNone) ++stats_.cut_copies;
  return Result::kDone;
}

void Unwinder::RecallOrUnwind(const perf::Sample& sample, RegisterSet sets[2],
                              std::vector<uint64_t>* ips, UnwindStats* d) {
  // The copy starts at the sample's sp (perf_output_sample_ustack).
  StackMemory mem(sets[0].sp(), sample.user_stack);
  if (!options_.memo || !memo_.Usable(sample.time)) {
    UnwindFrom(sample, mem, sets, ips, d);
    return;
  }
  if (const UnwindMemo::Entry* e = memo_.Find(sample.pid, sample.time, sets[0], mem)) {
    ips->assign(e->ips.begin(), e->ips.end());
    *d = e->stats;
    rule_hits_by_steps_ += e->rule_lookups;  // what its steps would have found cached
    return;
  }
  // Unwound with what it consults and reads noted, and kept.
  const RegisterSet first = sets[0];
  recording_.Clear();
  sets[0].Track(&recording_.consulted);
  sets[1].Track(&recording_.consulted);
  mem.Log(&recording_.reads);
  const uint64_t lookups = rule_lookups_;
  UnwindFrom(sample, mem, sets, ips, d);
  // (A stop at a pc in no mapping may be unwound again later: not kept.)
  if (d->stop_no_module) return;
  kept_.ips.assign(ips->begin(), ips->end());
  kept_.stats = *d;
  kept_.rule_lookups = rule_lookups_ - lookups;
  memo_.Put(sample.pid, sample.time, first, recording_, kept_);
}

void Unwinder::UnwindFrom(const perf::Sample& sample, const StackMemory& mem, RegisterSet sets[2],
                          std::vector<uint64_t>* ips, UnwindStats* d) {
  // The caller's set becomes the next step's callee's: no set is copied
  // per frame (nor the first one: a whole set read just after its values
  // were written one by one stalls on each piece).
  RegisterSet* regs_ptr = &sets[0];
  RegisterSet* caller_ptr = &sets[1];
  ips->push_back(regs_ptr->pc());
  bool exact_pc = true;
  while (true) {
    if (ips->size() >= options_.max_frames) {
      ++d->stop_max_depth;
      break;
    }
    const RegisterSet& regs = *regs_ptr;
    RegisterSet& caller = *caller_ptr;
    bool signal_frame = false;
    const Outcome o = Step(sample, mem, exact_pc, regs, &caller, &signal_frame, d);
    if (o == Outcome::kCfi || o == Outcome::kFramePointer) {
      // A caller's frame is above its callee's: anything else is a bad
      // frame or a loop (perf's libdwfl unwinder checks the same).
      if (caller.sp() <= regs.sp()) {
        ++d->stop_not_above;
        break;
      }
      ++(o == Outcome::kCfi ? d->frames_cfi : d->frames_fp);
      ips->push_back(caller.pc());
      std::swap(regs_ptr, caller_ptr);
      exact_pc = signal_frame;
      continue;
    }
    switch (o) {
      case Outcome::kEnd: ++d->stop_end; break;
      case Outcome::kNoModule: ++d->stop_no_module; break;
      case Outcome::kNoCfi: ++d->stop_no_cfi; break;
      case Outcome::kStackEnd: ++d->stop_stack_end; break;
      default: ++d->stop_bad_read; break;
    }
    break;
  }
  d->frames += ips->size();
}

Unwinder::Outcome Unwinder::Step(const perf::Sample& sample, const StackMemory& mem,
                                 bool exact_pc, const RegisterSet& regs, RegisterSet* caller,
                                 bool* signal_frame, UnwindStats* d) {
  // A return address is the instruction after the call: the call itself,
  // and so its CFI row and mapping, is at pc - 1 (libdwfl does the same).
  const uint64_t pc = regs.pc();
  const uint64_t lookup = exact_pc ? pc : pc - 1;
  const StepCache::Entry& at = Lookup(sample.pid, sample.time, lookup);
  if (at.rule_looked_up) ++rule_lookups_;
  if (at.code.kind == ModuleMap::kNone) return Outcome::kNoModule;
  if (at.code.kind == ModuleMap::kJit) ++d->frames_jit;
  StepStatus cfi_status = StepStatus::kUnsupported;
  if (at.rule_looked_up) {
    if (const FrameRule* rule = at.rule) {
      cfi_status = rule->Apply(regs, mem, rules_.expressions(), caller);
      if (cfi_status == StepStatus::kOk) {
        *signal_frame = rule->signal_frame;
        return Outcome::kCfi;
      }
      if (cfi_status == StepStatus::kEnd) return Outcome::kEnd;
      if (cfi_status == StepStatus::kPastCopy) return Outcome::kStackEnd;
      // A rule we could not apply (a register this frame lost, an
      // expression we do not evaluate, a read below the copy): the frame
      // pointer may still do.
    }
  }
  const StepStatus fp = FramePointerStep(regs, mem, caller);
  if (fp == StepStatus::kOk) return Outcome::kFramePointer;
  if (fp == StepStatus::kEnd) return Outcome::kEnd;
  if (fp == StepStatus::kPastCopy || cfi_status == StepStatus::kPastCopy) return Outcome::kStackEnd;
  if (IsReadFailure(fp) || IsReadFailure(cfi_status)) return Outcome::kBadRead;
  return Outcome::kNoCfi;
}

const StepCache::Entry& Unwinder::Lookup(uint32_t pid, uint64_t time, uint64_t pc) {
  if (const StepCache::Entry* kept = steps_.Find(pid, time, pc)) {
    if (kept->rule_looked_up) ++rule_hits_by_steps_;  // (counted as RuleCache's hit)
    return *kept;
  }
  StepCache::Entry e;
  e.code = modules_.Find(pid, time, pc);
  if (e.code.kind == ModuleMap::kElf && e.code.module != nullptr && e.code.vaddr_ok) {
    e.rule_looked_up = true;
    e.rule = rules_.Find(e.code.module, e.code.vaddr);
  }
  return *steps_.Put(pid, time, pc, e);
}

StepStatus Unwinder::FramePointerStep(const RegisterSet& regs, const StackMemory& mem,
                                      RegisterSet* caller) {
  uint64_t rbp;
  if (!regs.Get(x86_64::kRbp, &rbp)) return StepStatus::kUnknownRegister;
  // The psABI has the outermost frame (_start, ld.so's _dl_start_user,
  // clone's child) clear rbp: the end of the chain, not a bad frame.
  if (rbp == 0) return StepStatus::kEnd;
  // A frame pointer below sp is not this frame's (a function that uses rbp
  // for data, or a caller's stale one): no frame to follow.
  if (rbp < regs.sp() || rbp % 8 != 0) return StepStatus::kUnsupported;
  uint64_t saved_rbp = 0, ra = 0;
  if (StackMemory::Result r = mem.Read(rbp, &saved_rbp); r != StackMemory::kOk) {
    return r == StackMemory::kPastCopy ? StepStatus::kPastCopy : StepStatus::kBelowCopy;
  }
  if (StackMemory::Result r = mem.Read(rbp + 8, &ra); r != StackMemory::kOk) {
    return r == StackMemory::kPastCopy ? StepStatus::kPastCopy : StepStatus::kBelowCopy;
  }
  if (ra == 0) return StepStatus::kEnd;
  // The callee-saved registers other than rbp are not on the fp chain:
  // the caller's are unknown.
  caller->KeepOnly(0);
  caller->Set(x86_64::kRip, ra);
  caller->Set(x86_64::kRsp, rbp + 16);
  caller->Set(x86_64::kRbp, saved_rbp);
  return StepStatus::kOk;
}

UnwindStats Unwinder::stats() const {
  UnwindStats s = stats_;
  s.rule_hits = rules_.stats().hits + rule_hits_by_steps_;
  s.rule_misses = rules_.stats().misses;
  s.files_opened = modules_.stats().files_opened;
  s.files_missing = modules_.stats().files_missing;
  s.files_cfi_refused = modules_.stats().cfi_refused;
  s.first_cfi_refused = modules_.stats().first_cfi_refused;
  s.cache_bytes = rules_.bytes();
  return s;
}

}  // namespace pageblame::unwind

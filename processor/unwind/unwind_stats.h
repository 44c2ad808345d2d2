// What the unwinder did over a trace, for -v: how many samples it unwound,
// by which method each frame was found, why each unwind stopped where it
// did, and how well its caches served.
#ifndef PAGEBLAME_UNWIND_UNWIND_STATS_H_
#define PAGEBLAME_UNWIND_UNWIND_STATS_H_

#include <cstdint>
#include <string>

namespace pageblame::unwind {

struct UnwindStats {
  uint64_t samples = 0;   // samples with user registers and a stack copy, unwound
  uint64_t frames = 0;    // frames of all unwound stacks (the first: the sample's pc)
  uint64_t frames_cfi = 0;  // callers found by CFI (.eh_frame / .debug_frame)
  uint64_t frames_fp = 0;   // callers found by the frame pointer (no CFI there)
  uint64_t frames_jit = 0;  // frames in JIT code (anonymous or memfd code, named by perf-PID.map)
  // Why each unwind stopped (one per sample).
  uint64_t stop_end = 0;         // the outermost frame: the CFI says no caller
  uint64_t stop_no_module = 0;   // a pc in no executable mapping the trace knows
  uint64_t stop_no_cfi = 0;      // no CFI and no usable frame pointer
  uint64_t stop_stack_end = 0;   // the copied stack ended (the stack was deeper)
  uint64_t stop_bad_read = 0;    // a read below the stack copy (a bad frame)
  uint64_t stop_not_above = 0;   // a caller frame not above its callee (a loop)
  uint64_t stop_max_depth = 0;   // Unwinder::Options::max_frames reached
  // Samples that could not be unwound, or only partly.
  uint64_t no_registers = 0;     // REGS_USER absent or cut
  uint64_t other_abi = 0;        // registers of another abi or architecture
  uint64_t mask_lacks_ip_sp = 0; // sample_regs_user without ip or sp
  uint64_t cut_copies = 0;       // a stack copy cut short or inconsistent (dyn_size)
  // Samples unwound again once the mapping records of their round were in
  // (perf writes each CPU's buffer in turn: a library's MMAP2 record can
  // come later in the file than a sample that runs its code).
  uint64_t waited = 0;
  uint64_t waited_reread = 0;       // of those, read again from the file (no copy held)
  uint64_t waited_lost = 0;         // could not be read again: left with no stack
  uint64_t waited_max_bytes = 0;    // stack copies held at most at one time
  // The caches.
  uint64_t rule_hits = 0;        // CFI rules found in the (module, pc) cache
  uint64_t rule_misses = 0;      // computed with libdw
  uint64_t files_opened = 0;     // ELF files whose unwind tables were read
  uint64_t files_missing = 0;    // mapped files not found, or not ELF (then: frame pointers)
  // Files some of whose CFI was refused (ElfModule::cfi_refused: registers
  // past the architecture's, debug sections claiming too much), and why the
  // first one was.
  uint64_t files_cfi_refused = 0;
  std::string first_cfi_refused;
  uint64_t cache_bytes = 0;      // memory of the rule cache
  uint64_t nanos = 0;            // time spent unwinding (with -v only)

  // Adds what one unwind counted (the per-sample fields, not the caches').
  void AddSample(const UnwindStats& d) {
    samples += d.samples;
    frames += d.frames;
    frames_cfi += d.frames_cfi;
    frames_fp += d.frames_fp;
    frames_jit += d.frames_jit;
    stop_end += d.stop_end;
    stop_no_module += d.stop_no_module;
    stop_no_cfi += d.stop_no_cfi;
    stop_stack_end += d.stop_stack_end;
    stop_bad_read += d.stop_bad_read;
    stop_not_above += d.stop_not_above;
    stop_max_depth += d.stop_max_depth;
  }
};

}  // namespace pageblame::unwind

#endif  // PAGEBLAME_UNWIND_UNWIND_STATS_H_

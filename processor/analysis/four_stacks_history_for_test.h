// For the summary tests (attribution_summary_test, growth_summary_test): one
// replayed history of four stacks. S1 maps [A, A+4P) at 10 and [A+4P, A+8P)
// at 40, S3 [A+8P, A+14P) at 45, all rw-; S2 reserves [B, B+16P) PROT_NONE at
// 20 and commits [B, B+2P) at 50; S4 reserves [E, E+4P) at 60; the program's
// text [D, D+2P) existed before the trace.
#ifndef PAGEBLAME_ANALYSIS_FOUR_STACKS_HISTORY_FOR_TEST_H_
#define PAGEBLAME_ANALYSIS_FOUR_STACKS_HISTORY_FOR_TEST_H_

#include <sys/mman.h>

#include "processor/analysis/replayed_index_for_test.h"

namespace pageblame::analysis {

class FourStacksHistoryTest : public ReplayedIndexTest {
 protected:
  static constexpr uint64_t P = 4096, A = 0x300000000000, B = 0x300010000000, E = 0x300030000000,
                            D = 0x400000;
  const StackId kS1{1}, kS2{2}, kS3{3}, kS4{4};

  void ReplayFourStacks() {
    using decode::Syscall;
    Mmap2(5, D, 2 * P, 0, PROT_READ | PROT_EXEC, "/bin/prog");  // before the trace
    const uint64_t anon = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, rw = PROT_READ | PROT_WRITE;
    Call(10, Syscall::kMmap, {A, 4 * P, rw, anon, ~0ull, 0}, A, kS1);
    Call(20, Syscall::kMmap, {B, 16 * P, PROT_NONE, anon, ~0ull, 0}, B, kS2);
    Call(40, Syscall::kMmap, {A + 4 * P, 4 * P, rw, anon, ~0ull, 0}, A + 4 * P, kS1);
    Call(45, Syscall::kMmap, {A + 8 * P, 6 * P, rw, anon, ~0ull, 0}, A + 8 * P, kS3);
    Call(50, Syscall::kMprotect, {B, 2 * P, rw}, 0, kS2);
    Call(60, Syscall::kMmap, {E, 4 * P, PROT_NONE, anon, ~0ull, 0}, E, kS4);
    Done();
  }
};

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_FOUR_STACKS_HISTORY_FOR_TEST_H_

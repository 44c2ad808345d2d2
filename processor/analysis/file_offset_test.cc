// FileOffsetAt: an ip in a file mapping of the call's process at the call's
// time is its offset in the file; elsewhere there is none.
#include "processor/analysis/file_offset.h"

#include <sys/mman.h>

#include "gtest/gtest.h"
#include "processor/analysis/replayed_index_for_test.h"

namespace pageblame::analysis {
namespace {

using decode::Syscall;

constexpr uint64_t P = 4096, D = 0x400000, A = 0x300000000000;

class FileOffsetTest : public ReplayedIndexTest {
 protected:
  void SetUp() override {
    Mmap2(5, D, 2 * P, 0x3000, PROT_READ | PROT_EXEC, "/usr/lib/libfoo.so");
    Call(10, Syscall::kMmap, {A, P, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, ~0ull, 0}, A);
    Call(20, Syscall::kMunmap, {D, 2 * P}, 0);
    Done();
  }
  index::CallEvent CallAt(uint64_t t) {
    for (uint32_t i = 0; i < idx_.num_events(); ++i) {
      if (idx_.event(EventId(i)).time == t) return idx_.event(EventId(i));
    }
    ADD_FAILURE() << "no call at " << t;
    return idx_.event(EventId(0));
  }
};

TEST_F(FileOffsetTest, AnIpInAFileMappingThenIsItsOffsetInTheFile) {
  EXPECT_EQ(FileOffsetAt(idx_, CallAt(11), D + P + 0x10), 0x3000 + P + 0x10);
  EXPECT_EQ(FileOffsetAt(idx_, CallAt(11), A), std::nullopt);        // anonymous
  EXPECT_EQ(FileOffsetAt(idx_, CallAt(11), D + 2 * P), std::nullopt);  // past the mapping
  EXPECT_EQ(FileOffsetAt(idx_, CallAt(21), D), std::nullopt);        // unmapped by then (the call's exit)
}

}  // namespace
}  // namespace pageblame::analysis

// For the analysis/ tests that ask about a small hand-made history: an index
// filled by the real Replayer from calls of process 1 (and the MMAP2 records
// of what it had mapped before the trace), and the changes of a page's
// history as "change@time" for comparing.
//
//   class MyTest : public ReplayedIndexTest { void SetUp() override { Call(10, kMmap, {...}, addr); Done(); } };
#ifndef PAGEBLAME_ANALYSIS_REPLAYED_INDEX_FOR_TEST_H_
#define PAGEBLAME_ANALYSIS_REPLAYED_INDEX_FOR_TEST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "processor/analysis/history.h"
#include "processor/replay/call_events_for_test.h"
#include "processor/replay/replayer.h"

namespace pageblame::analysis {

class ReplayedIndexTest : public ::testing::Test {
 protected:
  ReplayedIndexTest() : replayer_(&idx_, nullptr) {}
  // One call of process 1 (thread 1), entered at `t`, returning at t + 1,
  // with the user stack `stack` (an id only: nothing is interned).
  void Call(uint64_t t, decode::Syscall sc, std::vector<uint64_t> args, int64_t ret, StackId stack = StackId()) {
    auto [in, out] = replay::CallEvents(t, 1, 1, sc, args, ret, stack);
    replayer_.Apply(in);
    replayer_.Apply(out);
  }
  // An MMAP2 record of process 1 outside any call: a mapping of `path` that
  // existed before the trace.
  void Mmap2(uint64_t t, uint64_t start, uint64_t len, uint64_t pgoff, uint32_t prot, const char* path) {
    replay::TraceEvent m(replay::TraceEvent::Kind::kMmap);
    m.time = t;
    m.pid = m.tid = 1;
    m.mmap().start = start;
    m.mmap().len = len;
    m.mmap().pgoff = pgoff;
    m.mmap().prot = prot;
    m.mmap().has_prot = true;
    m.mmap().filename = idx_.strings().Intern(path);
    replayer_.Apply(m);
  }
  // After the last Call: the index is complete.
  void Done() {
    replayer_.Finish();
    idx_.Finalize();
  }
  static std::vector<std::string> Changes(const std::vector<HistoryEntry>& h) {
    std::vector<std::string> out;
    for (const HistoryEntry& e : h) out.push_back(PageChangeName(e.change) + std::string("@") + std::to_string(e.time));
    return out;
  }

  index::TraceIndex idx_;
  replay::Replayer replayer_;
};

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_REPLAYED_INDEX_FOR_TEST_H_

// For the analysis/ tests that ask about a small hand-made history: an index
// filled by the real Replayer from calls of process 1, and the changes of a
// page's history as "change@time" for comparing.
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

namespace pageblame::report {

class ReplayedIndexTest : public ::testing::Test {
 protected:
  ReplayedIndexTest() : replayer_(&idx_, nullptr) {}
  // One call of process 1 (thread 1), entered at `t`, returning at t + 1.
  void Call(uint64_t t, decode::Syscall sc, std::vector<uint64_t> args, int64_t ret) {
    auto [in, out] = replay::CallEvents(t, 1, 1, sc, args, ret);
    replayer_.Apply(in);
    replayer_.Apply(out);
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

}  // namespace pageblame::report

#endif  // PAGEBLAME_ANALYSIS_REPLAYED_INDEX_FOR_TEST_H_

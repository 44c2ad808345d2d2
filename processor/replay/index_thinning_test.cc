// IndexCodec::EncodeThinned on replayed bundled traces: the index thinned
// at a moment answers every question about that moment and later as the
// whole one does (the regions alive, their extents, prot, creating and
// committing calls and stacks), holds fewer calls and versions, and says
// what went.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "processor/index/index_codec.h"
#include "processor/replay/trace_loader.h"

namespace pageblame::replay {
namespace {

std::unique_ptr<LoadedTrace> Load(const std::string& name) {
  LoadOptions o;
  o.path = std::string(PAGEBLAME_SOURCE_DIR) + "/traces/" + name;
  o.preload_symbols = false;
  absl::StatusOr<std::unique_ptr<LoadedTrace>> t = LoadTrace(o);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : nullptr;
}

// A call as answers show it: when, what, from which stack (ids differ).
std::string Call(const index::TraceIndex& idx, EventId e) {
  if (!e.valid()) return "-";
  const index::CallEvent& c = idx.event(e);
  return std::to_string(c.time) + "/" + std::to_string(static_cast<int>(c.syscall)) + "/" +
         std::to_string(c.ret) + "/" + std::to_string(c.stack.value());
}

// Process p's regions at t, as every answer reads them.
std::vector<std::string> StateAt(const index::TraceIndex& idx, uint32_t p, uint64_t t) {
  std::vector<std::string> out;
  for (VersionId id : idx.RegionsAt(p, t)) {
    const index::Version& v = idx.version(id);
    out.push_back(std::to_string(v.start) + "-" + std::to_string(v.end) + " " + std::to_string(v.attrs.prot) + " " +
                  std::to_string(v.t_from) + " " + Call(idx, v.origin) + " " + Call(idx, v.commit));
  }
  return out;
}

TEST(IndexThinningTest, TheStateFromTheCutOnIsWhole) {
  for (const char* name : {"phases-fp.data", "commit-dwarf.data", "rules-record.data", "alloc-dwarf.data"}) {
    SCOPED_TRACE(name);
    std::unique_ptr<LoadedTrace> t = Load(name);
    ASSERT_NE(t, nullptr);
    const index::TraceIndex& whole = t->index();
    const uint64_t first = whole.stats().first_time, last = whole.stats().last_time;
    const uint64_t cut = first + (last - first) / 2;
    std::string bytes;
    index::IndexCodec::EncodeThinned(whole, cut, &bytes);
    index::TraceIndex thin;
    ASSERT_TRUE(index::IndexCodec::Decode(bytes, &thin).ok());
    std::string full;
    index::IndexCodec::Encode(whole, &full);
    EXPECT_LT(bytes.size(), full.size());
    // The count the recorder's checkpoints guess a cut from is what is kept.
    EXPECT_EQ(index::IndexCodec::KeptByThinning(whole, cut), thin.num_events() + thin.num_versions());
    EXPECT_EQ(index::IndexCodec::KeptByThinning(whole, 0), whole.num_events() + whole.num_versions());

    const index::TraceStats& s = thin.stats();
    EXPECT_EQ(s.thinned_before, cut);
    EXPECT_GT(s.thinned_calls, 0u);
    EXPECT_EQ(thin.num_events() + s.thinned_calls, whole.num_events());
    EXPECT_EQ(thin.num_versions() + s.thinned_versions, whole.num_versions());
    for (size_t i = 0; i < thin.num_versions(); ++i) {
      EXPECT_GT(thin.version(VersionId(static_cast<uint32_t>(i))).t_to, cut);
    }
    ASSERT_EQ(thin.num_processes(), whole.num_processes());
    for (uint32_t p = 0; p < whole.num_processes(); ++p) {
      for (uint64_t at : {cut, cut + (last - cut) / 3, cut + 2 * (last - cut) / 3, last, index::kEndOfTrace}) {
        EXPECT_EQ(StateAt(thin, p, at), StateAt(whole, p, at)) << "process " << p << " at " << at;
      }
    }
    // Thinned again, later: what went adds up, the cut is the later one.
    std::string again;
    index::IndexCodec::EncodeThinned(thin, last, &again);
    index::TraceIndex thinner;
    ASSERT_TRUE(index::IndexCodec::Decode(again, &thinner).ok());
    EXPECT_EQ(thinner.stats().thinned_before, last);
    EXPECT_EQ(thinner.num_events() + thinner.stats().thinned_calls, whole.num_events());
    for (uint32_t p = 0; p < whole.num_processes(); ++p) {
      EXPECT_EQ(StateAt(thinner, p, index::kEndOfTrace), StateAt(whole, p, index::kEndOfTrace));
    }
  }
}

}  // namespace
}  // namespace pageblame::replay

// IndexCodec::EncodeThinned on replayed bundled traces: the index thinned
// at a moment answers every question about that moment and later as the
// whole one does (the regions alive, their extents, prot, paths, creating
// and committing calls and their stacks' frames), holds fewer calls,
// versions, stacks and strings, and says what went. And thinning in memory
// while the replay goes on (the recorder's folding) ends where thinning the
// whole replay's file does.
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "processor/base/temp_dir_for_test.h"
#include "processor/index/index_codec.h"
#include "processor/index/index_thinning.h"
#include "processor/perf/chunk_split_for_test.h"
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

// A stack as answers show it: its frames (ids differ once thinned).
std::string Stack(const index::TraceIndex& idx, StackId s) {
  if (!s.valid()) return "none";
  return absl::StrCat(absl::StrJoin(idx.stacks().Ips(s), ","), idx.stacks().Unwound(s) ? " unwound" : "");
}

// A call as answers show it: when, what, by whom, from which stack.
std::string Call(const index::TraceIndex& idx, EventId e) {
  if (!e.valid()) return "-";
  const index::CallEvent& c = idx.event(e);
  return absl::StrCat(c.time, "/", static_cast<int>(c.syscall), "/", c.ret, "/", c.pid, "/", c.tid, "/",
                      std::string(idx.strings().Get(c.comm)), "/", Stack(idx, c.stack));
}

// Process p's regions at t, as every answer reads them.
std::vector<std::string> StateAt(const index::TraceIndex& idx, uint32_t p, uint64_t t) {
  std::vector<std::string> out;
  for (VersionId id : idx.RegionsAt(p, t)) {
    const index::Version& v = idx.version(id);
    out.push_back(absl::StrCat(v.start, "-", v.end, " ", v.attrs.prot, " ", std::string(idx.strings().Get(v.attrs.path)), " ",
                               v.t_from, " ", Call(idx, v.origin), " ", Call(idx, v.commit)));
  }
  return out;
}

// Every stack of a thinned index is named by one of its calls (nothing
// kept that nothing names), and it holds as many stacks and strings as the
// whole index's calls, versions and processes kept at its cut name.
void ExpectTablesOnlyWhatIsNamed(const index::TraceIndex& thin, const index::TraceIndex& whole) {
  std::vector<bool> named(thin.stacks().size(), false);
  for (size_t i = 0; i < thin.num_events(); ++i) {
    const StackId s = thin.event(EventId(static_cast<uint32_t>(i))).stack;
    if (s.valid()) named.at(s.value()) = true;
  }
  for (size_t s = 0; s < named.size(); ++s) EXPECT_TRUE(named[s]) << "stack " << s << " is named by no call";
  index::TraceStats scratch;
  const index::IndexThinning n = index::IndexThinning::At(whole, thin.stats().thinned_before, &scratch);
  std::set<uint32_t> stacks, strings;
  for (size_t i = 0; i < whole.num_events(); ++i) {
    const index::CallEvent& e = whole.event(EventId(static_cast<uint32_t>(i)));
    if (!n.KeepsEvent(i)) continue;
    if (e.stack.valid()) stacks.insert(e.stack.value());
    if (e.comm.valid()) strings.insert(e.comm.value());
  }
  for (size_t i = 0; i < whole.num_versions(); ++i) {
    const StringId path = whole.version(VersionId(static_cast<uint32_t>(i))).attrs.path;
    if (n.KeepsVersion(i) && path.valid()) strings.insert(path.value());
  }
  for (uint32_t p = 0; p < whole.num_processes(); ++p) {
    if (whole.process(p).comm.valid()) strings.insert(whole.process(p).comm.value());
  }
  EXPECT_EQ(thin.stacks().size(), stacks.size());
  EXPECT_EQ(thin.strings().size(), strings.size());
}

TEST(IndexThinningTest, TheStateFromTheCutOnIsWhole) {
  for (const char* name :
       {"phases-fp.data", "commit-dwarf.data", "rules-record.data", "alloc-dwarf.data", "rules-lost.data"}) {
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
    // Each call kept is the whole index's, its stack's frames and its comm
    // included; the stack table holds only what they name.
    index::TraceStats scratch;
    const index::IndexThinning n = index::IndexThinning::At(whole, cut, &scratch);
    for (size_t i = 0; i < whole.num_events(); ++i) {
      if (!n.KeepsEvent(i)) continue;
      const EventId e(static_cast<uint32_t>(i));
      ASSERT_EQ(Call(thin, n.Event(e)), Call(whole, e)) << "call " << i;
    }
    ExpectTablesOnlyWhatIsNamed(thin, whole);
    EXPECT_LT(thin.stacks().size(), whole.stacks().size());
    EXPECT_LT(thin.stacks().num_frames(), whole.stacks().num_frames());
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
      EXPECT_EQ(StateAt(thinner, p, last), StateAt(whole, p, last));
      EXPECT_EQ(StateAt(thinner, p, index::kEndOfTrace), StateAt(whole, p, index::kEndOfTrace));
    }
    ExpectTablesOnlyWhatIsNamed(thinner, whole);
    // Thinning a thinned index at its own cut leaves it as it is.
    std::string same;
    index::IndexCodec::EncodeThinned(thinner, last, &same);
    EXPECT_EQ(same, again);
  }
}

// Bytes of the calls and versions `n` keeps, as the tables hold them.
size_t KeptBytes(const index::TraceIndex& idx, const index::IndexThinning& n) {
  return n.KeptEvents(idx.num_events()) * sizeof(index::CallEvent) +
         n.KeptVersions(idx.num_versions()) * sizeof(index::Version);
}

// The replay of `name` cut into 3 chunks, paused after the first (and the
// second) and thinned in memory at the time of the call that far (a
// fraction) into the calls replayed so far; the cuts made are put in `cuts`.
std::string ThinnedWhileReplaying(const std::string& name, const std::vector<double>& at, std::vector<uint64_t>* cuts) {
  TempDir dir("pb_thin_chunks");
  const std::vector<std::string> chunks = perf::testing::Split(std::string(PAGEBLAME_SOURCE_DIR) + "/traces/" + name,
                                                               dir.path(), 3);
  EXPECT_EQ(chunks.size(), 3u);
  size_t next = 0, done = 0;
  LoadOptions o;
  o.path = dir.path() + "/T";
  o.preload_symbols = false;
  o.next_chunk = [&]() -> absl::StatusOr<std::string> { return next < chunks.size() ? chunks[next++] : ""; };
  o.chunk_done = [&](const std::string&) { ++done; };
  o.checkpoint_due = [&] { return done > cuts->size() && cuts->size() < at.size(); };
  o.checkpoint = [&](const LoadedView& v) {
    const size_t n = v.index->num_events();
    const uint64_t cut = n == 0 ? 0 : v.index->event(EventId(static_cast<uint32_t>(at[cuts->size()] * static_cast<double>(n)))).time;
    cuts->push_back(cut);
    return cut;
  };
  absl::StatusOr<std::unique_ptr<LoadedTrace>> t = LoadTrace(o);
  EXPECT_TRUE(t.ok()) << t.status();
  std::string bytes;
  if (t.ok()) index::IndexCodec::Encode((*t)->index(), &bytes);
  return bytes;
}

TEST(IndexThinningTest, ThinningInMemoryWhileReplayingIsThinningTheWholeFile) {
  for (const char* name : {"rules-lost.data"}) {
    SCOPED_TRACE(name);
    LoadOptions o;
    o.path = std::string(PAGEBLAME_SOURCE_DIR) + "/traces/" + name;
    o.preload_symbols = false;
    o.perf_rounds_only = true;  // a chunk chain's order
    absl::StatusOr<std::unique_ptr<LoadedTrace>> whole = LoadTrace(o);
    ASSERT_TRUE(whole.ok()) << whole.status();
    // Once, and twice (the second cut later): the replay after each goes on
    // over the renumbered state, and ends as the whole thinned once at the last.
    for (const std::vector<double>& at : {std::vector<double>{0.8}, std::vector<double>{0.6, 0.9}}) {
      std::vector<uint64_t> cuts;
      const std::string thinned = ThinnedWhileReplaying(name, at, &cuts);
      ASSERT_EQ(cuts.size(), at.size()) << "not paused after each chunk";
      std::string expected;
      index::IndexCodec::EncodeThinned((*whole)->index(), cuts.back(), &expected);
      // In memory the stack and string tables stay whole (the replay holds
      // ids into them); the file written from it thins them as the whole's.
      index::TraceIndex in_memory;
      ASSERT_TRUE(index::IndexCodec::Decode(thinned, &in_memory).ok());
      EXPECT_EQ(in_memory.stacks().size(), (*whole)->index().stacks().size());
      std::string written;
      index::IndexCodec::EncodeThinned(in_memory, cuts.back(), &written);
      EXPECT_EQ(written, expected);
      index::TraceIndex back;
      ASSERT_TRUE(index::IndexCodec::Decode(written, &back).ok());
      EXPECT_GT(back.stats().thinned_calls, 0u) << "nothing was thinned: the test would show nothing";
      EXPECT_LT(back.num_events(), (*whole)->index().num_events());
    }
  }
}

TEST(IndexThinningTest, TheEarliestCutWithinABoundKeepsNoMoreThanIt) {
  for (const char* name : {"rules-record.data", "alloc-dwarf.data", "phases-fp.data"}) {
    SCOPED_TRACE(name);
    std::unique_ptr<LoadedTrace> t = Load(name);
    ASSERT_NE(t, nullptr);
    const index::TraceIndex& idx = t->index();
    const uint64_t first = idx.stats().first_time, last = idx.stats().last_time;
    const uint64_t step = std::max<uint64_t>((last - first + 4095) / 4096, 1);
    for (double f : {0.1, 0.5, 0.9}) {
      index::TraceStats scratch;
      const uint64_t c = first + static_cast<uint64_t>(f * static_cast<double>(last - first));
      const size_t bound = KeptBytes(idx, index::IndexThinning::At(idx, c, &scratch));
      const uint64_t cut = index::IndexThinning::EarliestCutWithin(idx, first, last, bound);
      EXPECT_LE(cut, c + step) << "a later cut than one that fits";
      EXPECT_LE(KeptBytes(idx, index::IndexThinning::At(idx, cut, &scratch)), bound);
      if (cut >= first + step) {
        EXPECT_GT(KeptBytes(idx, index::IndexThinning::At(idx, cut - step, &scratch)), bound)
            << "an earlier cut fits too";
      }
    }
    // Nothing fits a bound of 0 but the end; everything fits a huge one.
    EXPECT_EQ(index::IndexThinning::EarliestCutWithin(idx, first, last, 0), last);
    EXPECT_EQ(index::IndexThinning::EarliestCutWithin(idx, first, last, size_t{1} << 40), first);
  }
}

}  // namespace
}  // namespace pageblame::replay

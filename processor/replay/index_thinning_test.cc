// IndexCodec::EncodeThinned on replayed bundled traces: the index thinned
// at a moment answers every question about that moment and later as the
// whole one does (the regions alive, their extents, prot, paths, creating
// and committing calls and their stacks' frames), holds fewer calls,
// versions, stacks and strings, and says what went. And thinning in memory
// while the replay goes on (the recorder's folding) ends where thinning the
// whole replay's file does.
#include <algorithm>
#include <map>
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

// What the recorder's memory bound counts of `idx` thinned at `cut`
// (TraceIndex::BoundedBytes), as EarliestCutWithin counts it: the calls,
// versions and madvise calls kept, the stacks and frames they name, what
// no thinning makes smaller.
size_t KeptBytes(const index::TraceIndex& idx, uint64_t cut) {
  index::TraceStats scratch;
  const index::IndexThinning n = index::IndexThinning::At(idx, cut, &scratch, index::IndexThinning::Tables::kThinned);
  size_t bytes = n.KeptVersions(idx.num_versions()) * sizeof(index::Version) +
                 index::StackTable::KeptBytes(n.stacks()->num_stacks, n.stacks()->num_frames) + idx.UnthinnedBytes();
  for (size_t i = 0; i < idx.num_events(); ++i) {
    if (n.KeepsEvent(i)) bytes += idx.EventBytes(EventId(static_cast<uint32_t>(i)));
  }
  for (uint32_t p = 0; p < idx.num_processes(); ++p) {
    for (const index::Advice& a : idx.process(p).advice) {
      if (n.Event(a.event).valid()) bytes += sizeof(index::Advice);
    }
  }
  return bytes;
}

// A pause of the replay: once `after_chunks` chunks were read and then
// `records` more (mid-round: the sorter and the threads hold events, and
// dwarf samples wait with reserved stack ids), thinned in memory at the
// time of the call that far (`at`, a fraction) into the calls replayed so
// far; at < 0 only looks.
struct Pause {
  size_t after_chunks;
  size_t records;
  double at;
};

// What ThinnedWhileReplaying saw: the cuts made, the replay's last time at
// each, the stack thinning's counts at the last pause.
struct Seen {
  std::vector<uint64_t> cuts, paused_at;
  StackThinningStats stacks;
};

// The replay of `name` cut into 3 chunks and paused as `pauses` say.
std::unique_ptr<LoadedTrace> ThinnedWhileReplaying(const std::string& name, const std::vector<Pause>& pauses,
                                                   Seen* seen) {
  TempDir dir("pb_thin_chunks");
  const std::vector<std::string> chunks = perf::testing::Split(std::string(PAGEBLAME_SOURCE_DIR) + "/traces/" + name,
                                                               dir.path(), 3);
  EXPECT_EQ(chunks.size(), 3u);
  size_t next = 0, done = 0, paused = 0, records = 0;
  LoadOptions o;
  o.path = dir.path() + "/T";
  o.preload_symbols = false;
  o.next_chunk = [&]() -> absl::StatusOr<std::string> { return next < chunks.size() ? chunks[next++] : ""; };
  o.chunk_done = [&](const std::string&) { ++done; };
  o.checkpoint_due = [&] {
    if (paused >= pauses.size() || done < pauses[paused].after_chunks) return false;
    return records++ >= pauses[paused].records;
  };
  o.checkpoint = [&](const LoadedView& v) -> uint64_t {
    const Pause& p = pauses[paused];
    records = 0;
    if (v.stack_thinning != nullptr) seen->stacks = *v.stack_thinning;
    const size_t n = v.index->num_events();
    if (p.at >= 0 && n == 0) return 0;  // nothing replayed yet (a round holds it all): again later
    ++paused;
    if (p.at < 0) return 0;
    seen->cuts.push_back(v.index->event(EventId(static_cast<uint32_t>(p.at * static_cast<double>(n)))).time);
    seen->paused_at.push_back(v.index->stats().last_time);
    return seen->cuts.back();
  };
  absl::StatusOr<std::unique_ptr<LoadedTrace>> t = LoadTrace(o);
  EXPECT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(paused, pauses.size()) << "not paused as asked";
  return t.ok() ? *std::move(t) : nullptr;
}

// `thin` answers as `whole` thinned at `cut` does: the same calls kept, each
// with its stack's frames, one stack id for each of the whole's (and the
// other way round: interning after a thinning still dedupes), the same
// regions at every moment from the cut on.
void ExpectAnswersOfWholeThinnedAt(const index::TraceIndex& thin, const index::TraceIndex& whole, uint64_t cut) {
  index::TraceStats scratch;
  const index::IndexThinning n = index::IndexThinning::At(whole, cut, &scratch);
  ASSERT_EQ(thin.num_events(), n.KeptEvents(whole.num_events()));
  std::map<uint32_t, uint32_t> to_thin, to_whole;
  for (size_t i = 0; i < whole.num_events(); ++i) {
    if (!n.KeepsEvent(i)) continue;
    const EventId e(static_cast<uint32_t>(i));
    ASSERT_EQ(Call(thin, n.Event(e)), Call(whole, e)) << "call " << i;
    const StackId a = whole.event(e).stack, b = thin.event(n.Event(e)).stack;
    ASSERT_EQ(a.valid(), b.valid()) << "call " << i;
    if (!a.valid()) continue;
    EXPECT_EQ(to_thin.emplace(a.value(), b.value()).first->second, b.value()) << "stack " << a.value() << " split";
    EXPECT_EQ(to_whole.emplace(b.value(), a.value()).first->second, a.value()) << "stack " << b.value() << " merged";
  }
  const uint64_t last = whole.stats().last_time;
  ASSERT_EQ(thin.num_processes(), whole.num_processes());
  for (uint32_t p = 0; p < whole.num_processes(); ++p) {
    for (uint64_t at : {cut, cut + (last - cut) / 3, cut + 2 * (last - cut) / 3, last, index::kEndOfTrace}) {
      EXPECT_EQ(StateAt(thin, p, at), StateAt(whole, p, at)) << "process " << p << " at " << at;
    }
  }
}

// How many of the whole's stacks were named before `cut`, by no call from
// then until `paused` (so the thinning then left them out) and again after:
// met again after the thinning, interned afresh.
size_t StacksMetAgain(const index::TraceIndex& whole, uint64_t cut, uint64_t paused) {
  std::vector<int> state(whole.stacks().size(), 0);  // bits: 1 before, 2 between, 4 after
  for (size_t i = 0; i < whole.num_events(); ++i) {
    const index::CallEvent& c = whole.event(EventId(static_cast<uint32_t>(i)));
    if (!c.stack.valid()) continue;
    state[c.stack.value()] |= c.time <= cut ? 1 : c.time <= paused ? 2 : 4;
  }
  return static_cast<size_t>(std::count(state.begin(), state.end(), 1 | 4));
}

TEST(IndexThinningTest, ThinningInMemoryWhileReplayingIsThinningTheWholeFile) {
  size_t met_again = 0, held = 0;
  for (const char* name : {"rules-lost.data", "dotnet/dotnet-leak.data"}) {
    SCOPED_TRACE(name);
    LoadOptions o;
    o.path = std::string(PAGEBLAME_SOURCE_DIR) + "/traces/" + name;
    o.preload_symbols = false;
    o.perf_rounds_only = true;  // a chunk chain's order
    absl::StatusOr<std::unique_ptr<LoadedTrace>> whole_or = LoadTrace(o);
    ASSERT_TRUE(whole_or.ok()) << whole_or.status();
    const index::TraceIndex& whole = (*whole_or)->index();
    // Once, and twice (the second cut later), each pause at a chunk's end
    // or mid-round; a look at the end for the counts. The replay after each
    // goes on over the renumbered state (its stack table thinned too), and
    // ends as the whole thinned once at the last.
    const std::vector<std::vector<Pause>> all = {{{1, 0, 0.8}, {2, 40, -1}},
                                                 {{1, 7, 0.6}, {2, 3, 0.9}, {2, 60, -1}},
                                                 {{1, 25, 0.5}, {2, 0, 0.7}, {2, 90, -1}}};
    for (size_t i = 0; i < all.size(); ++i) {
      if (std::string(name) != "rules-lost.data" && i != 1) continue;  // the larger trace once: a fast test
      const std::vector<Pause>& pauses = all[i];
      SCOPED_TRACE(i);
      Seen seen;
      std::unique_ptr<LoadedTrace> t = ThinnedWhileReplaying(name, pauses, &seen);
      ASSERT_NE(t, nullptr);
      ASSERT_EQ(seen.cuts.size(), pauses.size() - 1) << "not paused as asked";
      const uint64_t cut = seen.cuts.back();
      const index::TraceIndex& in_memory = t->index();
      EXPECT_GT(in_memory.stats().thinned_calls, 0u) << "nothing was thinned: the test would show nothing";
      EXPECT_LT(in_memory.num_events(), whole.num_events());
      // The stack table thinned in memory: fewer stacks, the answers the same.
      EXPECT_EQ(seen.stacks.thinnings, seen.cuts.size());
      EXPECT_GT(seen.stacks.dropped, 0u);
      EXPECT_LT(in_memory.stacks().size(), whole.stacks().size());
      ExpectAnswersOfWholeThinnedAt(in_memory, whole, cut);
      held += seen.stacks.held;
      met_again += StacksMetAgain(whole, seen.cuts[0], seen.paused_at[0]);
      // The file written from it: the whole's thinned at the cut, in answers
      // (a stack met again is numbered after those kept, not in its first
      // place), and byte for byte where none was.
      std::string written, expected;
      index::IndexCodec::EncodeThinned(in_memory, cut, &written);
      index::IndexCodec::EncodeThinned(whole, cut, &expected);
      index::TraceIndex back;
      ASSERT_TRUE(index::IndexCodec::Decode(written, &back).ok());
      ExpectAnswersOfWholeThinnedAt(back, whole, cut);
      if (StacksMetAgain(whole, seen.cuts[0], seen.paused_at[0]) == 0 && seen.cuts.size() == 1) {
        EXPECT_EQ(written, expected);
      }
    }
  }
  // What makes the renumbering hard was there: stacks that only events
  // still held named (the sorter's, enters waiting for their exit), stacks
  // met again after they went. (No bundled dwarf trace has rounds enough
  // for a pause while samples wait with reserved ids: stack_interner_test.)
  EXPECT_GT(held, 0u);
  EXPECT_GT(met_again, 0u);
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
      const uint64_t c = first + static_cast<uint64_t>(f * static_cast<double>(last - first));
      const size_t bound = KeptBytes(idx, c);
      const uint64_t cut = index::IndexThinning::EarliestCutWithin(idx, first, last, bound);
      EXPECT_LE(cut, c + step) << "a later cut than one that fits";
      EXPECT_LE(KeptBytes(idx, cut), bound);
      if (cut >= first + step) {
        EXPECT_GT(KeptBytes(idx, cut - step), bound) << "an earlier cut fits too";
      }
    }
    // Stacks named from outside the index (the replay's held events) are
    // kept by every cut: with every stack so named, the cut that fits the
    // bound of the middle's thinning comes later (that thinning left
    // stacks out).
    {
      const uint64_t mid = first + (last - first) / 2;
      const size_t bound = KeptBytes(idx, mid);
      std::vector<StackId> every;
      for (size_t i = 0; i < idx.stacks().size(); ++i) every.push_back(StackId(static_cast<uint32_t>(i)));
      EXPECT_GT(index::IndexThinning::EarliestCutWithin(idx, first, last, bound, every),
                index::IndexThinning::EarliestCutWithin(idx, first, last, bound));
    }
    // Nothing fits a bound of 0 but the end, nor one below what no cut
    // thins (the strings, processes, live maps); everything fits a huge one.
    EXPECT_EQ(index::IndexThinning::EarliestCutWithin(idx, first, last, 0), last);
    EXPECT_EQ(index::IndexThinning::EarliestCutWithin(idx, first, last, idx.UnthinnedBytes()), last);
    EXPECT_LT(KeptBytes(idx, last), KeptBytes(idx, first));
    EXPECT_EQ(index::IndexThinning::EarliestCutWithin(idx, first, last, size_t{1} << 40), first);
  }
}

}  // namespace
}  // namespace pageblame::replay

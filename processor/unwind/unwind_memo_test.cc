// The unwind memo (unwind_memo.h) against the unwinder without it, on every
// bundled --call-graph dwarf trace: the same frames and counts for every
// sample, in file order as the loader unwinds them and again; and on
// samples changed word by word and register by register after their unwind
// was kept (each change the unwind read is a miss, and the answer is the
// changed sample's own), a mapping added, and a time before the latest
// mapping.
#include "processor/unwind/unwind_memo.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "processor/unwind/owned_sample_for_test.h"
#include "processor/unwind/trace_driver_for_test.h"
#include "processor/unwind/unwinder.h"

namespace pageblame::unwind {
namespace {

using testing::DriveTrace;
using testing::SharedSymfs;
using testing::TracePath;

Unwinder::Options OptionsWith(bool memo, const symbols::MappingHistory* maps) {
  Unwinder::Options o;
  o.locator.symfs = SharedSymfs().path();
  o.mappings = maps;
  o.memo = memo;
  return o;
}

// Every count the unwinders print (-v), the per-sample ones and the rules'.
void ExpectSameStats(const UnwindStats& a, const UnwindStats& b, const std::string& what) {
  EXPECT_EQ(a.samples, b.samples) << what;
  EXPECT_EQ(a.frames, b.frames) << what;
  EXPECT_EQ(a.frames_cfi, b.frames_cfi) << what;
  EXPECT_EQ(a.frames_fp, b.frames_fp) << what;
  EXPECT_EQ(a.frames_jit, b.frames_jit) << what;
  EXPECT_EQ(a.stop_end, b.stop_end) << what;
  EXPECT_EQ(a.stop_no_module, b.stop_no_module) << what;
  EXPECT_EQ(a.stop_no_cfi, b.stop_no_cfi) << what;
  EXPECT_EQ(a.stop_stack_end, b.stop_stack_end) << what;
  EXPECT_EQ(a.stop_bad_read, b.stop_bad_read) << what;
  EXPECT_EQ(a.stop_not_above, b.stop_not_above) << what;
  EXPECT_EQ(a.stop_max_depth, b.stop_max_depth) << what;
  EXPECT_EQ(a.cut_copies, b.cut_copies) << what;
  EXPECT_EQ(a.rule_hits, b.rule_hits) << what;
  EXPECT_EQ(a.rule_misses, b.rule_misses) << what;
  EXPECT_EQ(a.files_opened, b.files_opened) << what;
}

// A trace's samples unwound as the loader does (each as it is read, the
// mappings read so far known) by an unwinder with the memo and one
// without, then every sample again; `samples` gets them.
struct Both {
  symbols::MappingHistory maps;  // first: outlives the unwinders
  std::unique_ptr<Unwinder> with, without;
  std::vector<OwnedSample> samples;
};

void UnwindBoth(const std::string& trace, Both* b) {
  b->with = std::make_unique<Unwinder>(OptionsWith(true, &b->maps));
  b->without = std::make_unique<Unwinder>(OptionsWith(false, &b->maps));
  std::vector<uint64_t> a, c;
  DriveTrace(TracePath(trace), &b->maps, [&](const perf::Sample& s) {
    b->samples.emplace_back(s);
    const Unwinder::Result ra = b->with->Unwind(s, &a, /*may_wait=*/true);
    const Unwinder::Result rc = b->without->Unwind(s, &c, /*may_wait=*/true);
    ASSERT_EQ(ra, rc) << trace << " at " << s.time;
    ASSERT_EQ(a, c) << trace << " at " << s.time;
  });
  for (const OwnedSample& s : b->samples) {
    b->with->Unwind(s.sample, &a);
    b->without->Unwind(s.sample, &c);
    ASSERT_EQ(a, c) << trace << " at " << s.sample.time;
  }
}

TEST(UnwindMemoTest, EveryBundledDwarfTraceUnwindsAsWithoutTheMemo) {
  uint64_t hits = 0;
  for (const char* trace : {"alloc-dwarf.data", "commit-dwarf.data", "vec-dwarf.data", "python-dwarf.data",
                            "node-dwarf.data", "jvm-dwarf.data", "rules-dwarf-zstd.data"}) {
    Both b;
    UnwindBoth(trace, &b);
    ASSERT_FALSE(b.samples.empty()) << trace;
    ExpectSameStats(b.with->stats(), b.without->stats(), trace);
    EXPECT_EQ(b.without->memo_hits(), 0u);
    hits += b.with->memo_hits();
  }
  EXPECT_GT(hits, 100u);  // the memo answered: the comparison is of something
}

// The samples of alloc-dwarf.data the memo answers a second time.
struct Remembered {
  Both b;
  std::vector<size_t> hit;  // indexes into b.samples
};

void Remember(Remembered* r) {
  UnwindBoth("alloc-dwarf.data", &r->b);
  std::vector<uint64_t> ips;
  for (size_t i = 0; i < r->b.samples.size(); ++i) {
    const uint64_t before = r->b.with->memo_hits();
    r->b.with->Unwind(r->b.samples[i].sample, &ips);
    r->b.without->Unwind(r->b.samples[i].sample, &ips);  // (the counts stay comparable)
    if (r->b.with->memo_hits() > before) r->hit.push_back(i);
  }
}

TEST(UnwindMemoTest, AnyChangedStackWordOrRegisterGivesTheChangedSamplesOwnStack) {
  Remembered r;
  Remember(&r);
  ASSERT_GE(r.hit.size(), 5u);
  Unwinder& with = *r.b.with;
  Unwinder& without = *r.b.without;
  std::vector<uint64_t> kept, a, c;
  int changed_answers = 0, misses = 0;
  for (size_t n = 0; n < r.hit.size() && n < 12; ++n) {
    const OwnedSample& s = r.b.samples[r.hit[n]];
    with.Unwind(s.sample, &kept);
    without.Unwind(s.sample, &c);
    // Each 8-byte word of the first 2 KiB of the copy (every frame's
    // return address and saved registers of these stacks), then each
    // register, changed, unwound by both, then the sample as it was (kept
    // again: the slot holds the last unwind put).
    std::vector<std::pair<bool, size_t>> changes;
    for (size_t off = 0; off + 8 <= s.stack.size() && off < 2048; off += 8) changes.push_back({true, off});
    for (size_t off = 0; off + 8 <= s.regs.size(); off += 8) changes.push_back({false, off});
    for (const auto& [in_stack, off] : changes) {
      OwnedSample m = s;
      std::vector<uint8_t>& bytes = in_stack ? m.stack : m.regs;
      uint64_t v;
      std::memcpy(&v, bytes.data() + off, 8);
      v += 0x1010;  // another plausible address, and 8-aligned if it was
      std::memcpy(bytes.data() + off, &v, 8);
      const uint64_t before = with.memo_hits();
      with.Unwind(m.sample, &a);
      without.Unwind(m.sample, &c);
      ASSERT_EQ(a, c) << "sample " << r.hit[n] << (in_stack ? " stack +" : " regs +") << off;
      if (a != kept) ++changed_answers;
      if (with.memo_hits() == before) ++misses;
      with.Unwind(s.sample, &a);
      without.Unwind(s.sample, &c);
      ASSERT_EQ(a, kept);
      ASSERT_EQ(c, kept);
    }
  }
  ExpectSameStats(with.stats(), without.stats(), "after the changes");
  EXPECT_GT(changed_answers, 10);  // changes that mattered were seen as such
  EXPECT_GT(misses, changed_answers);
}

TEST(UnwindMemoTest, AMappingAddedOrAnEarlierTimeIsNotAnsweredFromTheMemo) {
  Remembered r;
  Remember(&r);
  ASSERT_FALSE(r.hit.empty());
  Unwinder& with = *r.b.with;
  std::vector<uint64_t> kept, a, c;
  OwnedSample s = r.b.samples[r.hit.front()];
  with.Unwind(s.sample, &kept);
  uint64_t hits = with.memo_hits();
  with.Unwind(s.sample, &a);
  EXPECT_EQ(with.memo_hits(), hits + 1);
  // A mapping read (the history's generation changes): stepped again, the same.
  r.b.maps.AddMapping(999999, s.sample.time, 0x10000, 0x1000, 0, "/nothing", "");
  hits = with.memo_hits();
  with.Unwind(s.sample, &a);
  EXPECT_EQ(with.memo_hits(), hits);
  EXPECT_EQ(a, kept);
  with.Unwind(s.sample, &a);  // kept again under the new generation
  EXPECT_EQ(with.memo_hits(), hits + 1);
  // A time before the history's latest: stepped (its lookups may differ).
  OwnedSample early = s;
  r.b.maps.AddMapping(999999, s.sample.time + 1000, 0x20000, 0x1000, 0, "/nothing", "");
  hits = with.memo_hits();
  with.Unwind(early.sample, &a);
  r.b.without->Unwind(early.sample, &c);
  EXPECT_EQ(with.memo_hits(), hits);
  EXPECT_EQ(a, c);
  EXPECT_EQ(a, kept);
}

}  // namespace
}  // namespace pageblame::unwind

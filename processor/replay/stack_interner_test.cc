// StackInterner on hand-made samples: frame-pointer chains interned as they
// are; --call-graph dwarf samples unwound at once when their code is known,
// else held (a compressed copy, or their place in the file) until the round
// ends, then bound to the reserved id or made an alias of an equal stack.
// The unwinder is the real one; the code is a JIT-like mapping ("[jit]": no
// file to read), so each frame steps by its frame pointer.
#include "processor/replay/stack_interner.h"

#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pageblame::replay {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr uint64_t kSp = 0x7ffc00000000;
constexpr uint64_t kCode = 0x400000;
constexpr uint64_t kLeaf = kCode + 0x100;

// A --call-graph dwarf sample that owns its registers and stack copy: pc
// kLeaf, then a frame-pointer chain whose frames return to `callers` (each
// frame 32 bytes above the last, from `first_frame` bytes above sp). The
// rest of the copy is `fill`.
struct DwarfSample {
  perf::EventAttr attr;
  std::vector<uint8_t> regs, stack;
  perf::Sample sample;

  DwarfSample(uint32_t pid, std::vector<uint64_t> callers, size_t stack_size = 512,
              size_t first_frame = 16, const std::vector<uint8_t>* fill = nullptr) {
    attr.sample_type = perf::kSampleTid | perf::kSampleCallchain | perf::kSampleRegsUser |
                       perf::kSampleStackUser;
    attr.sample_regs_user = (1u << 6) | (1u << 7) | (1u << 8);  // bp, sp, ip
    if (fill != nullptr) {
      stack.assign(fill->begin(), fill->begin() + stack_size);
    } else {
      stack.assign(stack_size, 0);
    }
    uint64_t bp = kSp + first_frame;
    for (size_t i = 0; i < callers.size(); ++i) {
      const uint64_t saved_bp = i + 1 < callers.size() ? bp + 32 : 0;
      Put(bp - kSp, saved_bp);
      Put(bp - kSp + 8, callers[i]);
      bp = saved_bp;
    }
    const uint64_t first_bp = callers.empty() ? 0 : kSp + first_frame;
    for (uint64_t r : {first_bp, kSp, kLeaf}) {
      regs.insert(regs.end(), reinterpret_cast<const uint8_t*>(&r),
                  reinterpret_cast<const uint8_t*>(&r) + 8);
    }
    sample.pid = sample.tid = pid;
    sample.time = 100;
    sample.regs_abi = perf::kRegsAbi64;
    Repoint();
  }
  DwarfSample(const DwarfSample& o) : attr(o.attr), regs(o.regs), stack(o.stack), sample(o.sample) {
    Repoint();
  }
  void Put(size_t at, uint64_t v) { std::memcpy(&stack[at], &v, 8); }
  void Repoint() {
    sample.attr = &attr;
    sample.user_regs = regs;
    sample.user_stack = stack;
  }
  // What a reused buffer does to the bytes the sample pointed at.
  void Scribble() {
    std::fill(regs.begin(), regs.end(), 0xee);
    std::fill(stack.begin(), stack.end(), 0xee);
  }
};

class StackInternerTest : public ::testing::Test {
 protected:
  StackInternerTest() : unwinder_(OptionsWith(&maps_)) {}
  static unwind::Unwinder::Options OptionsWith(const symbols::MappingHistory* maps) {
    unwind::Unwinder::Options o;
    o.mappings = maps;
    return o;
  }
  void MapCode(uint32_t pid) { maps_.AddMapping(pid, 50, kCode, 0x10000, 0, "[jit]", ""); }

  index::StackTable table_;
  symbols::MappingHistory maps_;  // before unwinder_: it outlives it
  unwind::Unwinder unwinder_;
};

TEST_F(StackInternerTest, FramePointerChainsAreTheirUserIpsOnce) {
  StackInterner interner(&table_, nullptr);
  perf::EventAttr attr;
  attr.sample_type = perf::kSampleCallchain;
  const std::vector<uint64_t> chain = {perf::kContextKernel, 0xffffffff81000010, 0xffffffff81000020,
                                       perf::kContextUser, 0x401000, 0x402000};
  perf::Sample s;
  s.attr = &attr;
  s.callchain = chain;
  const StackId a = interner.Intern(s);
  const StackId again = interner.Intern(s);
  EXPECT_EQ(a, again);
  EXPECT_THAT(table_.Ips(a), ElementsAre(0x401000, 0x402000));  // leaf first, user only
  EXPECT_FALSE(table_.Unwound(a));
  const std::vector<uint64_t> other = {perf::kContextUser, 0x401000, 0x403000};
  s.callchain = other;
  EXPECT_NE(interner.Intern(s), a);
  const std::vector<uint64_t> kernel_only = {perf::kContextKernel, 0xffffffff81000010};
  s.callchain = kernel_only;
  const StackId empty = interner.Intern(s);
  EXPECT_THAT(table_.Ips(empty), IsEmpty());
  EXPECT_EQ(table_.size(), 3u);
  EXPECT_EQ(interner.waited(), 0u);
}

TEST_F(StackInternerTest, AChainWithUserIpsIsTakenAsItIsEvenWithAStackCopy) {
  StackInterner interner(&table_, &unwinder_);
  DwarfSample d(7, {kCode + 0x200});
  const std::vector<uint64_t> chain = {perf::kContextUser, 0x401000};
  d.sample.callchain = chain;
  const StackId id = interner.Intern(d.sample);
  EXPECT_THAT(table_.Ips(id), ElementsAre(0x401000));
  EXPECT_EQ(interner.waited(), 0u);
  EXPECT_EQ(unwinder_.stats().samples, 0u);  // not unwound
}

TEST_F(StackInternerTest, ADwarfSampleInKnownCodeIsUnwoundAtOnce) {
  MapCode(7);
  StackInterner interner(&table_, &unwinder_);
  DwarfSample d(7, {kCode + 0x200, kCode + 0x300});
  const StackId id = interner.Intern(d.sample);
  EXPECT_THAT(table_.Ips(id), ElementsAre(kLeaf, kCode + 0x200, kCode + 0x300));
  EXPECT_TRUE(table_.Unwound(id));
  EXPECT_EQ(interner.waited(), 0u);
  // The same stack again: the same id.
  DwarfSample same(7, {kCode + 0x200, kCode + 0x300});
  EXPECT_EQ(interner.Intern(same.sample), id);
  DwarfSample other(7, {kCode + 0x200, kCode + 0x400});
  EXPECT_NE(interner.Intern(other.sample), id);
}

TEST_F(StackInternerTest, ASampleInCodeNotMappedYetWaitsForTheEndOfItsRoundWithACopy) {
  StackInterner interner(&table_, &unwinder_);
  DwarfSample d(7, {kCode + 0x200, kCode + 0x300});
  const StackId id = interner.Intern(d.sample);
  ASSERT_TRUE(id.valid());
  EXPECT_THAT(table_.Ips(id), IsEmpty());  // reserved: nothing yet
  EXPECT_EQ(interner.waited(), 1u);
  EXPECT_GT(interner.max_waiting_bytes(), 0u);
  d.Scribble();  // the reader's buffer moves on: the interner kept its own copy
  MapCode(7);    // the MMAP2 record, later in the file
  interner.FinishedRound();
  EXPECT_THAT(table_.Ips(id), ElementsAre(kLeaf, kCode + 0x200, kCode + 0x300));
  EXPECT_THAT(interner.aliases(), IsEmpty());
  EXPECT_EQ(interner.reread(), 0u);
  // Later samples of that stack find it under the same id.
  DwarfSample again(7, {kCode + 0x200, kCode + 0x300});
  EXPECT_EQ(interner.Intern(again.sample), id);
  EXPECT_EQ(interner.waited(), 1u);
}

TEST_F(StackInternerTest, AWaitingStackEqualToOneInternedBeforeBecomesItsAlias) {
  MapCode(7);
  StackInterner interner(&table_, &unwinder_);
  DwarfSample known(7, {kCode + 0x200});
  const StackId first = interner.Intern(known.sample);
  DwarfSample waits(8, {kCode + 0x200});  // pid 8: its code is not mapped yet
  const StackId reserved = interner.Intern(waits.sample);
  ASSERT_NE(reserved, first);
  MapCode(8);
  interner.FinishedRound();
  ASSERT_EQ(interner.aliases().size(), 1u);
  EXPECT_EQ(interner.aliases().at(reserved), first);
  EXPECT_THAT(table_.Ips(reserved), ElementsAre(kLeaf, kCode + 0x200));
}

TEST_F(StackInternerTest, AThinnedTableRenumbersTheWaitingSamplesAndForgetsAppliedAliases) {
  // The recorder thins the table in memory mid-round (load_pass.h
  // ThinStacks): a sample still waiting keeps its reserved id, renumbered,
  // and is bound under it at its round's end; an alias, applied by every
  // holder before (Resolved), is forgotten.
  MapCode(7);
  StackInterner interner(&table_, &unwinder_);
  DwarfSample gone(7, {kCode + 0x500}), known(7, {kCode + 0x200});
  const StackId dropped = interner.Intern(gone.sample);
  const StackId first = interner.Intern(known.sample);
  DwarfSample alias(8, {kCode + 0x200}), waits(9, {kCode + 0x300, kCode + 0x400});
  const StackId reserved_alias = interner.Intern(alias.sample);  // pid 8, 9: code not mapped yet
  MapCode(8);
  interner.FinishedRound();
  ASSERT_EQ(interner.Resolved(reserved_alias), first);
  EXPECT_EQ(interner.Resolved(first), first);
  const StackId reserved = interner.Intern(waits.sample);
  // The holders: `first` (its alias resolved) and the waiting sample.
  std::vector<bool> keep(table_.size(), false);
  keep[interner.Resolved(reserved_alias).value()] = true;
  interner.ForEachWaiting([&](StackId s) { keep[s.value()] = true; });
  EXPECT_FALSE(keep[dropped.value()]);
  const index::StackTable::Kept k = table_.Thin(keep);
  interner.Renumbered(k);
  EXPECT_THAT(interner.aliases(), IsEmpty());
  const StackId now_first(k.stacks[first.value()]), now_reserved(k.stacks[reserved.value()]);
  EXPECT_EQ(table_.size(), 2u);
  EXPECT_THAT(table_.Ips(now_first), ElementsAre(kLeaf, kCode + 0x200));
  std::vector<StackId> waiting;
  interner.ForEachWaiting([&](StackId s) { waiting.push_back(s); });
  EXPECT_THAT(waiting, ElementsAre(now_reserved));
  MapCode(9);
  interner.FinishedRound();
  EXPECT_THAT(table_.Ips(now_reserved), ElementsAre(kLeaf, kCode + 0x300, kCode + 0x400));
  EXPECT_THAT(interner.aliases(), IsEmpty());
  // The stack that went, met again: a new id, its own frames; the kept one
  // is found under its new id.
  DwarfSample gone_again(7, {kCode + 0x500}), known_again(7, {kCode + 0x200});
  const StackId fresh = interner.Intern(gone_again.sample);
  EXPECT_EQ(fresh, StackId(2));
  EXPECT_THAT(table_.Ips(fresh), ElementsAre(kLeaf, kCode + 0x500));
  EXPECT_EQ(interner.Intern(known_again.sample), now_first);
}

TEST_F(StackInternerTest, FinishUnwindsWhatStillWaitsWithWhatIsKnown) {
  StackInterner interner(&table_, &unwinder_);
  DwarfSample d(7, {kCode + 0x200});
  const StackId id = interner.Intern(d.sample);
  interner.Finish();  // its code was never mapped: the leaf from the registers
  EXPECT_THAT(table_.Ips(id), ElementsAre(kLeaf));
  interner.Finish();  // nothing left: harmless
  EXPECT_THAT(table_.Ips(id), ElementsAre(kLeaf));
  EXPECT_EQ(interner.waited(), 1u);
}

TEST_F(StackInternerTest, HeldCopiesRoundTripWhateverTheStackHolds) {
  // Random bytes (incompressible) and zeros, 16 KiB, frames far from sp.
  std::mt19937_64 rng(7);
  std::vector<uint8_t> noise(16384);
  for (uint8_t& b : noise) b = static_cast<uint8_t>(rng());
  StackInterner interner(&table_, &unwinder_);
  std::vector<StackId> ids;
  std::vector<std::vector<uint64_t>> want;
  for (int i = 0; i < 6; ++i) {
    const std::vector<uint64_t> callers = {kCode + 0x1000 + i, kCode + 0x2000, kCode + 0x3000 + 8 * i};
    DwarfSample d(7, callers, 16384, 8000 + 1000 * i, i % 2 ? &noise : nullptr);
    ids.push_back(interner.Intern(d.sample));
    want.push_back({kLeaf});
    want.back().insert(want.back().end(), callers.begin(), callers.end());
    d.Scribble();
  }
  MapCode(7);
  interner.FinishedRound();
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(table_.Ips(ids[i]), want[i]) << i;
  // The random copies were kept whole (no smaller than themselves).
  EXPECT_GE(interner.max_waiting_bytes(), 3 * 16384u);
}

TEST_F(StackInternerTest, ASampleThatCanBeReadAgainWaitsAsItsPlaceInTheFile) {
  std::map<uint64_t, DwarfSample> file;  // record offset -> the sample read there
  int rereads = 0;
  StackInterner interner(&table_, &unwinder_, [&](const perf::RawRecord& rec, perf::Sample* out) {
    ++rereads;
    EXPECT_EQ(rec.bytes.data(), nullptr);  // only its place and size were kept
    EXPECT_EQ(rec.bytes.size(), 600u);
    auto it = file.find(rec.offset);
    if (it == file.end()) return false;
    *out = it->second.sample;
    return true;
  });
  const std::vector<uint8_t> record_bytes(600, 0);
  perf::RawRecord rec;
  rec.bytes = record_bytes;
  rec.offset = 4096;
  file.emplace(4096, DwarfSample(7, {kCode + 0x200}, 16384));
  const StackId id = interner.Intern(file.at(4096).sample, &rec);
  EXPECT_LT(interner.max_waiting_bytes(), 1024u);  // not a 16 KiB copy
  rec.offset = 8192;  // a record that is gone when read again
  DwarfSample lost(7, {kCode + 0x500});
  const StackId lost_id = interner.Intern(lost.sample, &rec);
  MapCode(7);
  interner.FinishedRound();
  EXPECT_EQ(rereads, 2);
  EXPECT_EQ(interner.reread(), 1u);
  EXPECT_EQ(interner.reread_failed(), 1u);
  EXPECT_THAT(table_.Ips(id), ElementsAre(kLeaf, kCode + 0x200));
  EXPECT_THAT(table_.Ips(lost_id), IsEmpty());
  // Without a Reread function a record is no use: the sample is copied.
  StackInterner copying(&table_, &unwinder_);
  DwarfSample d(9, {kCode + 0x200}, 16384);
  copying.Intern(d.sample, &rec);
  EXPECT_GT(copying.max_waiting_bytes(), sizeof(perf::RawRecord) + 16);
}

TEST_F(StackInternerTest, PastTheWaitingLimitTheOldestAreUnwoundAtOnce) {
  // 1 MiB incompressible copies: 64 of them fill kMaxWaitingBytes.
  constexpr size_t kStack = 1 << 20;
  std::mt19937_64 rng(3);
  std::vector<uint8_t> noise(kStack);
  for (size_t i = 0; i + 8 <= noise.size(); i += 8) {
    const uint64_t v = rng();
    std::memcpy(&noise[i], &v, 8);
  }
  StackInterner interner(&table_, &unwinder_);
  const size_t n = StackInterner::kMaxWaitingBytes / kStack + 2;
  std::vector<StackId> ids;
  for (size_t i = 0; i < n; ++i) {
    DwarfSample d(7, {kCode + 0x200 + i}, kStack, 64, &noise);
    ids.push_back(interner.Intern(d.sample));
  }
  EXPECT_EQ(interner.waited(), n);
  EXPECT_LE(interner.max_waiting_bytes(), StackInterner::kMaxWaitingBytes + kStack + 4096);
  // The oldest were unwound with what was known (no mapping: the leaf).
  EXPECT_THAT(table_.Ips(ids[0]), ElementsAre(kLeaf));
  EXPECT_THAT(table_.Ips(ids[n - 1]), IsEmpty());  // the newest still waits
  MapCode(7);
  interner.FinishedRound();
  EXPECT_THAT(table_.Ips(ids[n - 1]), ElementsAre(kLeaf, kCode + 0x200 + n - 1));
}

}  // namespace
}  // namespace pageblame::replay

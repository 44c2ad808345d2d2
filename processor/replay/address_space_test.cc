// AddressSpace on its own: each operation's contract at region boundaries
// (half-open ranges, empty ranges, pieces of several versions), what it
// returns and when it asks for the call that ends versions, and one
// randomized comparison with a page-by-page model, at every past time too.
// The replay rules that lead to these operations (length rounding, failed
// calls, brk, the mremap forms) are tested through the Replayer in
// replayer_test.cc and commit_rules_test.cc.
#include "processor/replay/address_space.h"

#include <sys/mman.h>

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pageblame::replay {
namespace {

using index::Begin;
using index::End;
using index::kEndOfTrace;
using index::RegionAttrs;
using index::Version;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr uint64_t P = 4096;
constexpr uint64_t B = 0x100000;  // a base address
constexpr uint32_t kRW = PROT_READ | PROT_WRITE;
using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;

class AddressSpaceTest : public ::testing::Test {
 protected:
  AddressSpaceTest() {
    index::Process p;
    p.pid = 1;
    proc_ = idx_.AddProcess(p);
  }
  AddressSpace Space() { return AddressSpace(&idx_, proc_); }
  EventId Call(uint64_t t) {
    index::CallEvent e;
    e.time = t;
    return idx_.AddEvent(e);
  }
  RegionAttrs Anon(uint32_t prot) {
    RegionAttrs a;
    a.prot = prot;
    a.flags = MAP_PRIVATE | MAP_ANONYMOUS;
    return a;
  }
  RegionAttrs File(uint32_t prot, uint64_t pgoff) {
    RegionAttrs a;
    a.prot = prot;
    a.flags = MAP_PRIVATE;
    a.pgoff = pgoff;
    a.path = idx_.strings().Intern("/usr/lib/libx.so");
    return a;
  }
  const Version& V(VersionId id) { return idx_.version(id); }
  // The live version at addr; fails the test if there is none.
  const Version& Live(uint64_t addr) {
    const VersionId id = idx_.Lookup(proc_, addr, kEndOfTrace);
    EXPECT_TRUE(id.valid()) << std::hex << addr;
    static const Version none;
    return id.valid() ? idx_.version(id) : none;
  }
  bool Mapped(uint64_t addr) { return idx_.Lookup(proc_, addr, kEndOfTrace).valid(); }
  Ranges LiveRanges() {
    Ranges out;
    for (const auto& [start, region] : idx_.process(proc_).live) out.emplace_back(start, region.end);
    return out;
  }
  uint64_t MappedNow() { return idx_.process(proc_).mapped.now(); }

  index::TraceIndex idx_;
  uint32_t proc_ = 0;
};

TEST_F(AddressSpaceTest, CreateAddsOneLiveVersionOfTheCall) {
  const EventId ev = Call(10);
  const VersionId id = Space().Create(B, B + 4 * P, 10, ev, Anon(kRW));
  EXPECT_THAT(LiveRanges(), ElementsAre(std::make_pair(B, B + 4 * P)));
  const Version& v = V(id);
  EXPECT_EQ(v.begin, Begin::kCreated);
  EXPECT_EQ(v.origin, ev);
  EXPECT_EQ(v.begin_event, ev);
  EXPECT_FALSE(v.commit.valid());
  EXPECT_EQ(v.t_from, 10u);
  EXPECT_EQ(v.t_to, kEndOfTrace);
  EXPECT_EQ(v.process, proc_);
  EXPECT_EQ(MappedNow(), 4 * P);
  // Half-open: the last page is in, the next address is not.
  EXPECT_TRUE(Mapped(B + 4 * P - 1));
  EXPECT_FALSE(Mapped(B + 4 * P));
  EXPECT_FALSE(Mapped(B - 1));
}

TEST_F(AddressSpaceTest, RemoveSplitsAndReturnsTheRemovedPartsInAddressOrder) {
  AddressSpace as = Space();
  const EventId e1 = Call(10), e2 = Call(20), un = Call(30);
  const VersionId a = as.Create(B, B + 4 * P, 10, e1, File(PROT_READ, 0x3000));
  const VersionId b = as.Create(B + 6 * P, B + 10 * P, 20, e2, Anon(kRW));
  // From the middle of a, over the hole, into the middle of b.
  AddressSpace::Pieces removed = as.Remove(B + 1 * P, B + 8 * P, 30, End::kUnmapped, un);
  ASSERT_EQ(removed.size(), 2u);
  EXPECT_EQ(removed[0].start, B + P);
  EXPECT_EQ(removed[0].end, B + 4 * P);
  EXPECT_EQ(removed[0].from, a);
  EXPECT_EQ(removed[0].t_from, 10u);
  EXPECT_EQ(removed[0].ended, End::kUnmapped);
  EXPECT_EQ(removed[1].start, B + 6 * P);
  EXPECT_EQ(removed[1].end, B + 8 * P);
  EXPECT_EQ(removed[1].from, b);
  EXPECT_THAT(LiveRanges(), ElementsAre(std::make_pair(B, B + P), std::make_pair(B + 8 * P, B + 10 * P)));
  EXPECT_EQ(MappedNow(), 3 * P);
  // Both old versions ended whole, by the call, at its time.
  for (VersionId old : {a, b}) {
    EXPECT_EQ(V(old).t_to, 30u);
    EXPECT_EQ(V(old).end_kind, End::kUnmapped);
    EXPECT_EQ(V(old).end_event, un);
  }
  // What stays goes on as split versions with the origin, linked back.
  const Version& head = Live(B);
  EXPECT_EQ(head.begin, Begin::kSplit);
  EXPECT_EQ(head.begin_event, un);
  EXPECT_EQ(head.origin, e1);
  EXPECT_EQ(head.prev, a);
  EXPECT_EQ(head.attrs.pgoff, 0x3000u);
  const Version& tail = Live(B + 9 * P);
  EXPECT_EQ(tail.origin, e2);
  EXPECT_EQ(tail.prev, b);
  EXPECT_EQ(tail.prev_addr, B + 8 * P);
  EXPECT_EQ(tail.t_from, 30u);
}

TEST_F(AddressSpaceTest, ASplitFileMappingsTailKeepsItsFileOffset) {
  AddressSpace as = Space();
  as.Create(B, B + 4 * P, 10, Call(10), File(PROT_READ, 0x10000));
  as.Remove(B + P, B + 2 * P, 20, End::kUnmapped, Call(20));
  EXPECT_EQ(Live(B + 2 * P).attrs.pgoff, 0x10000u + 2 * P);
  EXPECT_EQ(as.AttrsAt(B + 3 * P).pgoff, 0x10000u + 3 * P);  // the offset of that page
  EXPECT_EQ(as.AttrsAt(B).pgoff, 0x10000u);
  // Anonymous memory has no offset to shift.
  as.Create(B + 8 * P, B + 12 * P, 30, Call(30), Anon(kRW));
  as.Remove(B + 8 * P, B + 9 * P, 40, End::kUnmapped, Call(40));
  EXPECT_EQ(Live(B + 10 * P).attrs.pgoff, 0u);
}

TEST_F(AddressSpaceTest, RangesThatOnlyTouchARegionLeaveItAlone) {
  AddressSpace as = Space();
  const VersionId a = as.Create(B + 2 * P, B + 4 * P, 10, Call(10), Anon(kRW));
  EXPECT_THAT(as.Remove(B, B + 2 * P, 20, End::kUnmapped, Call(20)), IsEmpty());  // ends at its start
  EXPECT_THAT(as.Remove(B + 4 * P, B + 6 * P, 20, End::kUnmapped, Call(20)), IsEmpty());  // starts at its end
  EXPECT_THAT(as.Peek(B, B + 2 * P), IsEmpty());
  EXPECT_THAT(as.Peek(B + 4 * P, B + 5 * P), IsEmpty());
  EXPECT_EQ(V(a).t_to, kEndOfTrace);
  EXPECT_EQ(idx_.num_versions(), 1u);
  // A neighbour created right after it is another region.
  as.Create(B + 4 * P, B + 5 * P, 30, Call(30), Anon(kRW));
  EXPECT_EQ(Live(B + 4 * P - 1).t_from, 10u);
  EXPECT_EQ(Live(B + 4 * P).t_from, 30u);
}

TEST_F(AddressSpaceTest, EmptyAndInvertedRangesChangeNothingAndRecordNoCall) {
  AddressSpace as = Space();
  as.Create(B, B + 4 * P, 10, Call(10), Anon(kRW));
  const size_t versions = idx_.num_versions();
  int asked = 0;
  auto record = [&] {
    ++asked;
    return Call(20);
  };
  for (auto [a, b] : {std::pair<uint64_t, uint64_t>{B + P, B + P}, {B + 2 * P, B + P}}) {
    EXPECT_THAT(as.Remove(a, b, 20, End::kUnmapped, Call(20)), IsEmpty());
    EXPECT_FALSE(as.Unmap(a, b, 20, record, [](const AddressSpace::Piece&) { return false; }));
    EXPECT_THAT(as.Peek(a, b), IsEmpty());
    EXPECT_EQ(as.MappedPrefixEnd(a, b), a);
  }
  EXPECT_EQ(asked, 0);
  EXPECT_EQ(idx_.num_versions(), versions);
  EXPECT_THAT(LiveRanges(), ElementsAre(std::make_pair(B, B + 4 * P)));
  EXPECT_EQ(MappedNow(), 4 * P);
}

TEST_F(AddressSpaceTest, UnmapAsksForItsCallOnceAndOnlyIfSomethingIsThere) {
  AddressSpace as = Space();
  as.Create(B, B + 2 * P, 10, Call(10), Anon(kRW));
  as.Create(B + 4 * P, B + 6 * P, 10, Call(10), Anon(kRW));
  int asked = 0;
  EventId un;
  auto record = [&] {
    ++asked;
    return un = Call(20);
  };
  auto none = [](const AddressSpace::Piece&) { return false; };
  EXPECT_FALSE(as.Unmap(B + 2 * P, B + 4 * P, 20, record, none));  // the hole between them
  EXPECT_EQ(asked, 0);
  EXPECT_TRUE(as.Unmap(B, B + 6 * P, 20, record, none));  // both regions, one call
  EXPECT_EQ(asked, 1);
  EXPECT_THAT(LiveRanges(), IsEmpty());
  EXPECT_EQ(MappedNow(), 0u);
  EXPECT_EQ(idx_.version(VersionId(0)).end_event, un);
  EXPECT_EQ(idx_.version(VersionId(1)).end_event, un);
}

TEST_F(AddressSpaceTest, UnmapKeepsThePiecesItIsToldToKeep) {
  AddressSpace as = Space();
  const VersionId old = as.Create(B, B + 2 * P, 10, Call(10), Anon(kRW));
  const VersionId young = as.Create(B + 2 * P, B + 4 * P, 30, Call(30), Anon(kRW));
  // Keep what was placed at or after t = 25 (as munmap does for pages
  // another thread mapped while the call ran).
  int asked = 0;
  EXPECT_TRUE(as.Unmap(B, B + 4 * P, 40, [&] { return ++asked, Call(40); },
                       [](const AddressSpace::Piece& p) { return p.t_from >= 25; }));
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(V(old).end_kind, End::kUnmapped);
  EXPECT_EQ(V(young).t_to, kEndOfTrace);
  EXPECT_THAT(LiveRanges(), ElementsAre(std::make_pair(B + 2 * P, B + 4 * P)));
  // Keeping everything still counts as the call having met something.
  asked = 0;
  EXPECT_TRUE(as.Unmap(B, B + 4 * P, 50, [&] { return ++asked, Call(50); },
                       [](const AddressSpace::Piece&) { return true; }));
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(V(young).t_to, kEndOfTrace);
}

TEST_F(AddressSpaceTest, PeekClipsToTheRangeAndChangesNothing) {
  AddressSpace as = Space();
  const VersionId a = as.Create(B, B + 4 * P, 10, Call(10), Anon(kRW));
  const VersionId b = as.Create(B + 4 * P, B + 8 * P, 20, Call(20), Anon(PROT_READ));
  AddressSpace::Pieces p = as.Peek(B + P, B + 5 * P);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].start, B + P);
  EXPECT_EQ(p[0].end, B + 4 * P);
  EXPECT_EQ(p[0].from, a);
  EXPECT_EQ(p[0].ended, End::kNotEnded);
  EXPECT_EQ(p[1].start, B + 4 * P);
  EXPECT_EQ(p[1].end, B + 5 * P);
  EXPECT_EQ(p[1].from, b);
  EXPECT_EQ(p[1].t_from, 20u);
  EXPECT_EQ(idx_.num_versions(), 2u);
  EXPECT_THAT(LiveRanges(), ElementsAre(std::make_pair(B, B + 4 * P), std::make_pair(B + 4 * P, B + 8 * P)));
}

TEST_F(AddressSpaceTest, MapReplacesWhatWasThereAndOnlyThat) {
  AddressSpace as = Space();
  const EventId e1 = Call(10), fixed = Call(20);
  const VersionId a = as.Create(B, B + 8 * P, 10, e1, Anon(kRW));
  const VersionId m = as.Map(B + 2 * P, B + 4 * P, 20, fixed, Anon(PROT_READ));
  EXPECT_EQ(V(a).end_kind, End::kReplaced);
  EXPECT_EQ(V(a).end_event, fixed);
  EXPECT_EQ(V(m).origin, fixed);
  EXPECT_EQ(V(m).begin, Begin::kCreated);
  EXPECT_THAT(LiveRanges(), ElementsAre(std::make_pair(B, B + 2 * P), std::make_pair(B + 2 * P, B + 4 * P),
                                        std::make_pair(B + 4 * P, B + 8 * P)));
  EXPECT_EQ(Live(B + P).origin, e1);
  EXPECT_EQ(Live(B + 5 * P).origin, e1);
  EXPECT_EQ(MappedNow(), 8 * P);
  // Over nothing: a plain create, nothing ended.
  const size_t versions = idx_.num_versions();
  as.Map(B + 16 * P, B + 17 * P, 30, Call(30), Anon(kRW));
  EXPECT_EQ(idx_.num_versions(), versions + 1);
  // Over several regions and holes: one region.
  as.Map(B + P, B + 20 * P, 40, Call(40), Anon(kRW));
  EXPECT_THAT(LiveRanges(), ElementsAre(std::make_pair(B, B + P), std::make_pair(B + P, B + 20 * P)));
  EXPECT_EQ(MappedNow(), 20 * P);
}

TEST_F(AddressSpaceTest, ProtectDoesNothingAndRecordsNoCallWhenNothingChanges) {
  AddressSpace as = Space();
  as.Create(B, B + 4 * P, 10, Call(10), Anon(PROT_READ));
  int asked = 0;
  auto record = [&] { return ++asked, Call(20); };
  EXPECT_FALSE(as.Protect(B, B + 4 * P, 20, record, PROT_READ, false));
  // Bits beyond rwx (PROT_GROWSDOWN) are not a prot of the pages.
  EXPECT_FALSE(as.Protect(B + P, B + 2 * P, 20, record, PROT_READ | PROT_GROWSDOWN, false));
  EXPECT_FALSE(as.Protect(B, B, 20, record, kRW, false));  // empty
  EXPECT_EQ(asked, 0);
  EXPECT_EQ(idx_.num_versions(), 1u);
}

TEST_F(AddressSpaceTest, ProtectSplitsLikeTheKernelAndNamesCommitsAndDecommits) {
  AddressSpace as = Space();
  const EventId reserve = Call(10);
  as.Create(B, B + 8 * P, 10, reserve, Anon(PROT_NONE));
  const EventId commit = Call(20);
  EXPECT_TRUE(as.Protect(B + 2 * P, B + 6 * P, 20, [&] { return commit; }, kRW, false));
  EXPECT_THAT(LiveRanges(), ElementsAre(std::make_pair(B, B + 2 * P), std::make_pair(B + 2 * P, B + 6 * P),
                                        std::make_pair(B + 6 * P, B + 8 * P)));
  const Version& c = Live(B + 2 * P);
  EXPECT_EQ(c.begin, Begin::kCommitted);
  EXPECT_EQ(c.commit, commit);
  EXPECT_EQ(c.origin, reserve);
  EXPECT_EQ(c.attrs.prot, kRW);
  EXPECT_EQ(c.attrs.flags, uint32_t{MAP_PRIVATE | MAP_ANONYMOUS});  // other attrs kept
  EXPECT_EQ(Live(B).attrs.prot, uint32_t{PROT_NONE});
  EXPECT_FALSE(Live(B).commit.valid());
  EXPECT_EQ(MappedNow(), 8 * P);
  // rw- to r--: neither; the commit stays.
  const EventId ro = Call(30);
  as.Protect(B + 2 * P, B + 3 * P, 30, [&] { return ro; }, PROT_READ, false);
  EXPECT_EQ(Live(B + 2 * P).begin, Begin::kProtected);
  EXPECT_EQ(Live(B + 2 * P).commit, commit);
  // Decommit: origin kept, commit cleared.
  const EventId none = Call(40);
  as.Protect(B + 3 * P, B + 4 * P, 40, [&] { return none; }, PROT_NONE, false);
  EXPECT_EQ(Live(B + 3 * P).begin, Begin::kDecommitted);
  EXPECT_FALSE(Live(B + 3 * P).commit.valid());
  EXPECT_EQ(Live(B + 3 * P).origin, reserve);
  // The version it continues ended as changed, by that call.
  const Version& prev = V(Live(B + 3 * P).prev);
  EXPECT_EQ(prev.end_kind, End::kChanged);
  EXPECT_EQ(prev.end_event, none);
  EXPECT_EQ(prev.attrs.prot, kRW);
}

TEST_F(AddressSpaceTest, ProtectLeavesPagesAlreadyThereAndFillsHolesAsBeforeTrace) {
  AddressSpace as = Space();
  const VersionId rw = as.Create(B, B + 2 * P, 10, Call(10), Anon(kRW));
  as.Create(B + 3 * P, B + 4 * P, 10, Call(10), Anon(PROT_READ));
  const EventId ev = Call(20);
  EXPECT_TRUE(as.Protect(B, B + 5 * P, 20, [&] { return ev; }, kRW, /*unseen_were_none=*/false));
  EXPECT_EQ(V(rw).t_to, kEndOfTrace);  // already rw-: not split, not ended
  for (uint64_t hole : {B + 2 * P, B + 4 * P}) {
    const Version& v = Live(hole);
    EXPECT_EQ(v.begin, Begin::kBeforeTrace);
    EXPECT_FALSE(v.origin.valid());
    EXPECT_EQ(v.begin_event, ev);
    EXPECT_FALSE(v.commit.valid());
    EXPECT_EQ(v.attrs.prot, kRW);
  }
  EXPECT_EQ(as.MappedPrefixEnd(B, B + 8 * P), B + 5 * P);
  EXPECT_EQ(MappedNow(), 5 * P);
  // Holes that must have been PROT_NONE (perf record -d) are committed by
  // the call, unless it makes them PROT_NONE.
  const EventId c = Call(30);
  as.Protect(B + 8 * P, B + 9 * P, 30, [&] { return c; }, PROT_READ, /*unseen_were_none=*/true);
  EXPECT_EQ(Live(B + 8 * P).commit, c);
  as.Protect(B + 10 * P, B + 11 * P, 40, [&] { return Call(40); }, PROT_NONE, true);
  EXPECT_FALSE(Live(B + 10 * P).commit.valid());
}

TEST_F(AddressSpaceTest, MapOverAnonymousCommitsReservationsAndReplacesTheRest) {
  AddressSpace as = Space();
  const EventId reserve = Call(10), file = Call(11), fixed = Call(20);
  as.Create(B, B + 4 * P, 10, reserve, Anon(PROT_NONE));
  as.Create(B + 4 * P, B + 6 * P, 11, file, File(PROT_NONE, 0));
  as.MapOverAnonymous(B + 2 * P, B + 8 * P, 20, fixed, Anon(kRW));
  const Version& committed = Live(B + 3 * P);
  EXPECT_EQ(committed.origin, reserve);
  EXPECT_EQ(committed.commit, fixed);
  EXPECT_EQ(committed.begin, Begin::kCommitted);
  EXPECT_EQ(Live(B + 4 * P).origin, fixed);  // a file's pages are replaced
  EXPECT_FALSE(Live(B + 4 * P).commit.valid());
  EXPECT_EQ(Live(B + 7 * P).origin, fixed);  // and the hole created
  EXPECT_EQ(Live(B + P).attrs.prot, uint32_t{PROT_NONE});  // outside: untouched
  EXPECT_EQ(MappedNow(), 8 * P);
  // PROT_NONE over committed anonymous pages: a decommit in place.
  const EventId un = Call(30);
  as.MapOverAnonymous(B + 2 * P, B + 3 * P, 30, un, Anon(PROT_NONE));
  EXPECT_EQ(Live(B + 2 * P).begin, Begin::kDecommitted);
  EXPECT_EQ(Live(B + 2 * P).origin, reserve);
  EXPECT_FALSE(Live(B + 2 * P).commit.valid());
}

TEST_F(AddressSpaceTest, MoveCarriesHistoryAndMakesSourceGapsBeforeTracePages) {
  AddressSpace as = Space();
  const EventId made = Call(10), commit = Call(15), mv = Call(20);
  const VersionId a = as.Create(B, B + 2 * P, 10, made, Anon(PROT_NONE));
  as.Protect(B, B + 2 * P, 15, [&] { return commit; }, kRW, false);
  const VersionId f = as.Create(B + 3 * P, B + 4 * P, 10, made, File(PROT_READ, 0x7000));
  constexpr uint64_t D = 0x900000;
  // [B, B+4P): two pieces with a one-page gap between them.
  const RegionAttrs after = as.Move(B, 4 * P, D, 20, mv, /*keep_source=*/false);
  EXPECT_EQ(after.pgoff, 0x8000u);  // a page after the last one moved
  EXPECT_FALSE(Mapped(B));
  EXPECT_FALSE(Mapped(B + 3 * P));
  EXPECT_EQ(V(f).end_kind, End::kMovedOut);
  EXPECT_EQ(V(f).end_event, mv);
  const Version& moved = Live(D + P);
  EXPECT_EQ(moved.begin, Begin::kMovedIn);
  EXPECT_EQ(moved.begin_event, mv);
  EXPECT_EQ(moved.origin, made);
  EXPECT_EQ(moved.commit, commit);
  EXPECT_EQ(moved.prev_addr, B);
  EXPECT_EQ(V(moved.prev).prev, a);  // the history goes back through the mprotect
  const Version& gap = Live(D + 2 * P);
  EXPECT_EQ(gap.begin, Begin::kMovedIn);
  EXPECT_FALSE(gap.origin.valid());  // mapped before anything the trace shows
  EXPECT_FALSE(gap.prev.valid());
  EXPECT_EQ(Live(D + 3 * P).attrs.pgoff, 0x7000u);
  EXPECT_EQ(MappedNow(), 4 * P);
}

// What Move returns is what a tail grown after the moved pages gets (the
// kernel grows the VMA: its file offset goes on), however long the last
// piece is.
TEST_F(AddressSpaceTest, MoveReturnsTheAttrsOfAPageAfterTheMovedOnes) {
  AddressSpace as = Space();
  as.Create(B, B + 3 * P, 10, Call(10), File(PROT_READ, 0x3000));
  const RegionAttrs after = as.Move(B, 3 * P, 0x900000, 20, Call(20), false);
  EXPECT_EQ(after.pgoff, 0x3000u + 3 * P);
  EXPECT_TRUE(after.path.valid());
  EXPECT_EQ(after.prot, uint32_t{PROT_READ});
  // Anonymous memory: no offset appears.
  as.Create(B, B + 2 * P, 30, Call(30), Anon(kRW));
  EXPECT_EQ(as.Move(B, 2 * P, 0xa00000, 40, Call(40), false).pgoff, 0u);
  // Nothing known in the source: default attrs.
  EXPECT_EQ(as.Move(B + 8 * P, P, 0xb00000, 50, Call(50), false).pgoff, 0u);
}

TEST_F(AddressSpaceTest, MoveKeepingTheSourceEndsNothing) {
  AddressSpace as = Space();
  const EventId made = Call(10);
  const VersionId a = as.Create(B, B + 2 * P, 10, made, Anon(kRW));
  as.Move(B, 2 * P, 0x900000, 20, Call(20), /*keep_source=*/true);
  EXPECT_EQ(V(a).t_to, kEndOfTrace);
  EXPECT_EQ(Live(B).origin, made);
  EXPECT_EQ(Live(0x900000).origin, made);
  EXPECT_EQ(Live(0x900000).prev, a);
  EXPECT_EQ(MappedNow(), 4 * P);
}

TEST_F(AddressSpaceTest, AddBeforeTraceFillsOnlyWhatIsUnknown) {
  AddressSpace as = Space();
  const EventId made = Call(10);
  as.Create(B + 2 * P, B + 3 * P, 10, made, Anon(kRW));
  as.AddBeforeTrace(B, B + 4 * P, 20, File(PROT_READ | PROT_EXEC, 0x1000));
  EXPECT_THAT(LiveRanges(), ElementsAre(std::make_pair(B, B + 2 * P), std::make_pair(B + 2 * P, B + 3 * P),
                                        std::make_pair(B + 3 * P, B + 4 * P)));
  EXPECT_EQ(Live(B + 2 * P).origin, made);
  EXPECT_EQ(Live(B).begin, Begin::kBeforeTrace);
  EXPECT_EQ(Live(B + 3 * P).attrs.pgoff, 0x1000u + 3 * P);  // each gap's own offset
  // A newer record of the same pages replaces only unseen ones.
  as.AddBeforeTrace(B, B + 4 * P, 30, File(PROT_READ, 0x5000), /*replace_unseen=*/true);
  EXPECT_EQ(Live(B).attrs.pgoff, 0x5000u);
  EXPECT_EQ(Live(B).attrs.prot, uint32_t{PROT_READ});
  EXPECT_EQ(Live(B + 2 * P).origin, made);
  EXPECT_EQ(Live(B + 3 * P).attrs.pgoff, 0x5000u + 3 * P);
  // Pages a call touched (an mprotect) are not unseen any more.
  as.Protect(B, B + P, 40, [&] { return Call(40); }, kRW, false);
  as.AddBeforeTrace(B, B + 4 * P, 50, File(PROT_READ, 0x9000), true);
  EXPECT_EQ(Live(B).attrs.prot, kRW);
  EXPECT_EQ(MappedNow(), 4 * P);
}

TEST_F(AddressSpaceTest, CopyFromMakesTheChildsOwnVersionsAndClearEndsThemAll) {
  AddressSpace parent = Space();
  const EventId made = Call(10);
  const VersionId a = parent.Create(B, B + 2 * P, 10, made, Anon(kRW));
  index::Process c;
  c.pid = 2;
  const uint32_t child_proc = idx_.AddProcess(c);
  AddressSpace child(&idx_, child_proc);
  child.CopyFrom(proc_, 20);
  const VersionId copy = idx_.Lookup(child_proc, B, kEndOfTrace);
  ASSERT_TRUE(copy.valid());
  EXPECT_NE(copy, a);
  EXPECT_EQ(V(copy).begin, Begin::kForked);
  EXPECT_EQ(V(copy).origin, made);
  EXPECT_EQ(V(copy).prev, a);
  EXPECT_EQ(V(copy).process, child_proc);
  EXPECT_EQ(V(copy).t_from, 20u);
  // The child's munmap is its own.
  child.Remove(B, B + P, 30, End::kUnmapped, Call(30));
  EXPECT_EQ(V(a).t_to, kEndOfTrace);
  EXPECT_TRUE(Mapped(B));
  EXPECT_EQ(idx_.process(child_proc).mapped.now(), P);
  // exec: everything ends, nothing is left.
  child.Clear(40);
  EXPECT_THAT(idx_.process(child_proc).live, IsEmpty());
  EXPECT_EQ(idx_.process(child_proc).mapped.now(), 0u);
  EXPECT_EQ(V(a).t_to, kEndOfTrace);
  idx_.Finalize();
  const VersionId before_exec = idx_.Lookup(child_proc, B + P, 35);
  ASSERT_TRUE(before_exec.valid());
  EXPECT_EQ(V(before_exec).end_kind, End::kExec);
  EXPECT_EQ(V(before_exec).t_to, 40u);
  EXPECT_FALSE(idx_.Lookup(child_proc, B + P, 40).valid());
}

TEST_F(AddressSpaceTest, AttrsAtAndMappedPrefixEnd) {
  AddressSpace as = Space();
  EXPECT_EQ(as.AttrsAt(B).prot, 0u);  // nothing: default attrs
  EXPECT_FALSE(as.AttrsAt(B).path.valid());
  as.Create(B, B + 2 * P, 10, Call(10), Anon(kRW));
  as.Create(B + 2 * P, B + 3 * P, 10, Call(10), Anon(PROT_READ));
  as.Create(B + 4 * P, B + 5 * P, 10, Call(10), Anon(kRW));
  EXPECT_EQ(as.AttrsAt(B + 2 * P - 1).prot, kRW);
  EXPECT_EQ(as.AttrsAt(B + 2 * P).prot, uint32_t{PROT_READ});
  EXPECT_EQ(as.AttrsAt(B + 3 * P).prot, 0u);
  // A run across regions, up to the first hole; capped at b.
  EXPECT_EQ(as.MappedPrefixEnd(B, B + 8 * P), B + 3 * P);
  EXPECT_EQ(as.MappedPrefixEnd(B + P, B + 2 * P), B + 2 * P);
  EXPECT_EQ(as.MappedPrefixEnd(B + 3 * P, B + 8 * P), B + 3 * P);  // starts in a hole
  EXPECT_EQ(as.MappedPrefixEnd(B + 4 * P, B + 8 * P), B + 5 * P);
}

// --- a randomized comparison with a page-by-page model ---

struct PageState {
  EventId origin;
  EventId commit;
  uint32_t prot = 0;
  bool file = false;
  uint64_t pgoff = 0;
  bool operator==(const PageState& o) const {
    return origin == o.origin && commit == o.commit && prot == o.prot && file == o.file &&
           pgoff == o.pgoff;
  }
};
using Model = std::map<uint64_t, PageState>;  // page number -> state

class AddressSpaceModelTest : public AddressSpaceTest, public ::testing::WithParamInterface<int> {};

TEST_P(AddressSpaceModelTest, EveryStateMatchesAPageModelNowAndAtItsTime) {
  constexpr uint64_t kPages = 48;
  std::mt19937_64 rng(GetParam());
  AddressSpace as = Space();
  Model model;
  std::vector<Model> states;  // after op i, at time 10 * (i + 1)
  auto pick = [&](uint64_t* a, uint64_t* b) {
    *a = rng() % kPages;
    *b = std::min(kPages, *a + 1 + rng() % 12);
  };
  const uint32_t prots[] = {PROT_NONE, PROT_READ, kRW, PROT_READ | PROT_EXEC};
  const int kOps = 300;
  for (int i = 0; i < kOps; ++i) {
    const uint64_t t = 10 * (i + 1);
    uint64_t a, b;
    pick(&a, &b);
    const uint32_t prot = prots[rng() % 4];
    switch (rng() % 6) {
      case 0:
      case 1: {  // mmap MAP_FIXED, anonymous or a file
        const EventId ev = Call(t);
        const bool file = rng() % 3 == 0;
        const uint64_t pgoff = file ? P * (rng() % 100) : 0;
        as.Map(B + a * P, B + b * P, t, ev, file ? File(prot, pgoff) : Anon(prot));
        for (uint64_t pg = a; pg < b; ++pg) {
          model[pg] = PageState{ev, EventId(), prot, file, file ? pgoff + (pg - a) * P : 0};
        }
        break;
      }
      case 2: {  // munmap
        as.Remove(B + a * P, B + b * P, t, End::kUnmapped, Call(t));
        for (uint64_t pg = a; pg < b; ++pg) model.erase(pg);
        break;
      }
      case 3: {  // mprotect
        bool change = false;
        for (uint64_t pg = a; pg < b; ++pg) {
          change |= !model.count(pg) || model[pg].prot != prot;
        }
        EventId ev;
        const bool changed = as.Protect(B + a * P, B + b * P, t, [&] { return ev = Call(t); }, prot, false);
        ASSERT_EQ(changed, change) << i;
        ASSERT_EQ(ev.valid(), change) << i;
        for (uint64_t pg = a; pg < b && change; ++pg) {
          auto it = model.find(pg);
          if (it == model.end()) {
            model[pg] = PageState{EventId(), EventId(), prot, false, 0};
            continue;
          }
          PageState& s = it->second;
          if (s.prot == prot) continue;
          if (prot == PROT_NONE) s.commit = EventId();
          else if (s.prot == PROT_NONE) s.commit = ev;
          s.prot = prot;
        }
        break;
      }
      case 4: {  // MAP_FIXED anonymous over anonymous memory
        const EventId ev = Call(t);
        as.MapOverAnonymous(B + a * P, B + b * P, t, ev, Anon(prot));
        for (uint64_t pg = a; pg < b; ++pg) {
          auto it = model.find(pg);
          if (it != model.end() && !it->second.file &&
              (prot == PROT_NONE || it->second.prot == PROT_NONE)) {
            it->second.commit = prot == PROT_NONE ? EventId() : ev;
            it->second.prot = prot;
          } else {
            model[pg] = PageState{ev, EventId(), prot, false, 0};
          }
        }
        break;
      }
      case 5: {  // mremap move of a fully mapped range to a free one
        const uint64_t len = b - a;
        bool full = true;
        for (uint64_t pg = a; pg < b; ++pg) full &= model.count(pg) > 0;
        const uint64_t dst = rng() % (kPages - len + 1);
        bool free = true;
        for (uint64_t pg = dst; pg < dst + len; ++pg) free &= model.count(pg) == 0;
        if (!full || !free) {
          as.Remove(B + a * P, B + b * P, t, End::kUnmapped, Call(t));  // something else instead
          for (uint64_t pg = a; pg < b; ++pg) model.erase(pg);
          break;
        }
        as.Move(B + a * P, len * P, B + dst * P, t, Call(t), /*keep_source=*/false);
        Model moved;
        for (uint64_t pg = a; pg < b; ++pg) moved[dst + pg - a] = model[pg];
        for (uint64_t pg = a; pg < b; ++pg) model.erase(pg);
        for (const auto& [pg, s] : moved) model[pg] = s;
        break;
      }
    }
    // The live map: sorted, non-overlapping, each entry its live version.
    uint64_t prev_end = 0, bytes = 0;
    for (const auto& [start, region] : idx_.process(proc_).live) {
      const Version& v = V(region.version);
      ASSERT_GE(start, prev_end) << i;
      ASSERT_LT(start, region.end) << i;
      ASSERT_EQ(v.start, start) << i;
      ASSERT_EQ(v.end, region.end) << i;
      ASSERT_EQ(v.t_to, kEndOfTrace) << i;
      ASSERT_EQ(v.t_from, region.t_from) << i;
      prev_end = region.end;
      bytes += region.end - start;
    }
    ASSERT_EQ(bytes, model.size() * P) << i;
    ASSERT_EQ(MappedNow(), bytes) << i;
    states.push_back(model);
  }
  idx_.Finalize();
  // Every page, at the end and at every op's time, as the model had it.
  auto check = [&](const Model& want, uint64_t t, int i) {
    for (uint64_t pg = 0; pg < kPages; ++pg) {
      const uint64_t addr = B + pg * P + (pg * 97) % P;
      const VersionId id = idx_.Lookup(proc_, addr, t);
      auto it = want.find(pg);
      ASSERT_EQ(id.valid(), it != want.end()) << "op " << i << " page " << pg;
      if (!id.valid()) continue;
      const Version& v = V(id);
      PageState got{v.origin, v.commit, v.attrs.prot, v.attrs.path.valid(), 0};
      if (got.file) got.pgoff = v.attrs.pgoff + (B + pg * P - v.start);
      ASSERT_EQ(got, it->second) << "op " << i << " page " << pg;
    }
  };
  check(model, kEndOfTrace, kOps);
  for (int i = 0; i < kOps; ++i) check(states[i], 10 * (i + 1), i);
  // The versions alive at each time tile exactly the model's pages.
  for (int i = 0; i < kOps; i += 7) {
    uint64_t pages = 0;
    for (VersionId id : idx_.RegionsAt(proc_, 10 * (i + 1))) pages += (V(id).end - V(id).start) / P;
    ASSERT_EQ(pages, states[i].size()) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, AddressSpaceModelTest, ::testing::Values(1, 2, 3, 4));

}  // namespace
}  // namespace pageblame::replay

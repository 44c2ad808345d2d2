#include "processor/index/call_record.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "processor/index/index_codec.h"
#include "processor/index/trace_index.h"

namespace pageblame::index {
namespace {

constexpr uint64_t kSecond = 1000000000;
constexpr uint64_t kT = 5000 * kSecond;  // a perf clock well past boot

void ExpectSame(const CallEvent& a, const CallEvent& b) {
  EXPECT_EQ(a.time, b.time);
  EXPECT_EQ(a.first_time, b.first_time);
  EXPECT_EQ(a.last_time, b.last_time);
  EXPECT_EQ(a.pid, b.pid);
  EXPECT_EQ(a.tid, b.tid);
  EXPECT_EQ(a.syscall, b.syscall);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(a.args[i], b.args[i]) << "arg " << i;
  EXPECT_EQ(a.ret, b.ret);
  EXPECT_EQ(a.stack, b.stack);
  EXPECT_EQ(a.comm, b.comm);
}

// An anonymous mmap of a page as bench/deep_stacks.c makes them.
CallEvent Mmap(uint64_t time) {
  CallEvent e;
  e.time = time;
  e.first_time = time - 2500;
  e.last_time = time + 40;
  e.pid = 4242;
  e.tid = 4243;
  e.syscall = decode::Syscall::kMmap;
  const uint64_t args[6] = {0, 4096, 3, 0x22, 0xffffffff, 0};  // fd -1 as glibc's mmap passes it
  std::copy(std::begin(args), std::end(args), e.args);
  e.ret = 0x7f12345678000;
  e.stack = StackId(77);
  e.comm = StringId(3);
  return e;
}

// Calls that do not pack, each for one reason.
std::vector<CallEvent> Unpackable() {
  std::vector<CallEvent> out;
  CallEvent e = Mmap(kT);
  e.first_time = kT - 5 * kSecond;  // the call took 5 s: over 32 bits of ns
  e.last_time = kT + kSecond;       // its exit's duplicate a second late: over 24 bits
  out.push_back(e);
  e = Mmap(kT);
  e.first_time = 0;  // no enter time
  out.push_back(e);
  e = Mmap(kT);
  e.first_time = kT + 1;  // after its exit (a hand-made index)
  e.last_time = kT - 1;
  out.push_back(e);
  e = Mmap(kT);
  e.args[1] = uint64_t{256} << 30;  // a 256 GiB reservation
  out.push_back(e);
  e = Mmap(kT);
  e.args[5] = uint64_t{1} << 32;  // a file offset of 4 GiB
  out.push_back(e);
  e = Mmap(kT);
  e.syscall = decode::Syscall::kMunmap;
  e.args[3] = 0x7ffd12345678;  // a raw_syscalls enter's leftover register
  out.push_back(e);
  return out;
}

TEST(CallRecordTest, TheUsualCallPacksAndReadsBackAsItWas) {
  const CallEvent e = Mmap(kT);
  CallRecord r = CallRecord::Unpacked();
  EXPECT_FALSE(r.packed());
  ASSERT_TRUE(CallRecord::Pack(e, &r));
  ASSERT_TRUE(r.packed());
  ExpectSame(r.Unpack(), e);
  // The widest spans that still pack.
  CallEvent wide = e;
  wide.first_time = kT - 0xfffffffe;
  wide.last_time = kT + 0xffffff;
  wide.args[1] = 0xffffffff;  // under 4 GiB
  wide.args[4] = ~uint64_t{0};  // -1 sign-extended
  wide.args[5] = 0xfffffffff0000000;
  wide.ret = -12;
  ASSERT_TRUE(CallRecord::Pack(wide, &r));
  ExpectSame(r.Unpack(), wide);
  for (const CallEvent& u : Unpackable()) {
    CallRecord untouched = r;
    EXPECT_FALSE(CallRecord::Pack(u, &untouched));
    ExpectSame(untouched.Unpack(), wide);
  }
}

// A call the record cannot hold (one longer than 32 bits of ns, ...) keeps
// its exact values in the index, through SetEvent, the index file and
// thinning's renumbering.
TEST(CallRecordTest, ACallThatDoesNotPackKeepsItsExactValuesInTheIndex) {
  TraceIndex idx;
  // The stack and comm the calls name (the index file checks them).
  for (uint64_t ip = 0; ip <= 77; ++ip) idx.stacks().Intern(std::vector<uint64_t>{0x1000 + ip});
  for (const char* comm : {"a", "b", "c", "deep_stacks"}) idx.strings().Intern(comm);
  ASSERT_TRUE(idx.strings().size() > 3);
  const std::vector<CallEvent> odd = Unpackable();
  std::vector<CallEvent> all;
  for (size_t i = 0; i < odd.size(); ++i) {
    // Every other usual call before kT - 1 s, for thinning to drop.
    all.push_back(Mmap(i % 2 == 0 ? kT - (i + 1) * kSecond : kT + 10 * i));
    all.push_back(odd[i]);
  }
  for (const CallEvent& e : all) idx.AddEvent(e);
  for (size_t i = 0; i < all.size(); ++i) ExpectSame(idx.event(EventId(static_cast<uint32_t>(i))), all[i]);
  const uint64_t packed_bytes = all.size() * sizeof(CallRecord);
  EXPECT_EQ(idx.CallAndVersionBytes(), packed_bytes + odd.size() * sizeof(CallEvent));

  // Widened past what packs (a late raw exit), then back.
  CallEvent e = idx.event(EventId(0));
  e.last_time = e.time + 30 * kSecond;
  idx.SetEvent(EventId(0), e);
  ExpectSame(idx.event(EventId(0)), e);
  idx.SetEvent(EventId(0), all[0]);
  ExpectSame(idx.event(EventId(0)), all[0]);
  idx.SetEvent(EventId(1), all[0]);  // an unpacked call made usual
  ExpectSame(idx.event(EventId(1)), all[0]);
  idx.SetEvent(EventId(1), all[1]);
  EXPECT_EQ(idx.CallAndVersionBytes(), packed_bytes + odd.size() * sizeof(CallEvent));

  // The index file writes every value whole, and reads them back.
  std::string bytes;
  IndexCodec::Encode(idx, &bytes);
  TraceIndex copy;
  const absl::Status decoded = IndexCodec::Decode(bytes, &copy);
  ASSERT_TRUE(decoded.ok()) << decoded;
  ASSERT_EQ(copy.num_events(), all.size());
  for (size_t i = 0; i < all.size(); ++i) ExpectSame(copy.event(EventId(static_cast<uint32_t>(i))), all[i]);

  // Thinning at kT - 1 s drops the calls before (no version names them)
  // and renumbers the rest: the unpacked calls keep their values.
  idx.ThinBefore(kT - kSecond);
  std::vector<CallEvent> kept;
  for (const CallEvent& c : all) {
    if (c.time > kT - kSecond) kept.push_back(c);
  }
  ASSERT_LT(kept.size(), all.size());
  ASSERT_EQ(idx.num_events(), kept.size());
  for (size_t i = 0; i < kept.size(); ++i) ExpectSame(idx.event(EventId(static_cast<uint32_t>(i))), kept[i]);
  EXPECT_EQ(idx.CallAndVersionBytes(), kept.size() * sizeof(CallRecord) + odd.size() * sizeof(CallEvent));
}

}  // namespace
}  // namespace pageblame::index

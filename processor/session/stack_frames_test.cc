// StackFrames: each (stack, process) symbolized once and kept while its
// frames' mappings are the same; the same stack in another process, or
// after a library was mapped elsewhere, is symbolized again (a new serial),
// and what it says then is that mapping's.
#include "processor/session/stack_frames.h"

#include <sys/mman.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "processor/replay/call_events_for_test.h"
#include "processor/replay/replayer.h"
#include "processor/symbols/symbolizer_for_test.h"

namespace pageblame::session {
namespace {

constexpr uint64_t kLib = 0x7f0000000000, kCode = 0x400000;

class StackFramesTest : public ::testing::Test {
 protected:
  StackFramesTest() : sym_(symbols::SymbolizerOptions{}), replayer_(&idx_, nullptr) {}
  // The call's id: the index's events move as it grows.
  EventId Mmap(uint64_t t, uint32_t pid, uint64_t addr, StackId stack) {
    auto [in, out] = replay::CallEvents(t, pid, pid, decode::Syscall::kMmap,
                                        {addr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, ~0ull, 0},
                                        static_cast<int64_t>(addr), stack);
    replayer_.Apply(in);
    replayer_.Apply(out);
    return EventId(static_cast<uint32_t>(idx_.num_events() - 1));
  }
  static std::vector<std::string> Dsos(const StackFrames::Stack& s) {
    std::vector<std::string> out;
    for (const symbols::Frame& f : s.frames) out.push_back(f.dso);
    return out;
  }

  index::TraceIndex idx_;
  symbols::SymbolizerWithMaps sym_;
  replay::Replayer replayer_;
};

TEST_F(StackFramesTest, OneEntryPerStackAndProcessKeptWhileItsMappingsAreTheSame) {
  const uint64_t ips[] = {kLib + 0x1234, kCode + 0x10};
  const StackId stack = idx_.stacks().Intern(ips);
  sym_.maps().AddMapping(1, 1, kLib, 0x10000, 0, "/nonexistent/libfoo.so", "");
  const EventId id_a = Mmap(10, 1, 0x10000000, stack);
  const EventId id_b = Mmap(20, 2, 0x20000000, stack);  // pid 2 has no libfoo
  const EventId id_a2 = Mmap(30, 1, 0x30000000, stack);
  sym_.maps().AddMapping(1, 40, kLib, 0x10000, 0, "/nonexistent/libbar.so", "");
  const EventId id_a3 = Mmap(50, 1, 0x40000000, stack);
  const index::CallEvent &a = idx_.event(id_a), &b = idx_.event(id_b), &a2 = idx_.event(id_a2),
                         &a3 = idx_.event(id_a3);
  StackFrames frames(idx_, sym_);

  const StackFrames::Stack& first = frames.Of(a);
  const uint64_t serial_a = first.serial;
  ASSERT_EQ(first.frames.size(), 2u);
  ASSERT_EQ(first.keys.size(), 2u);
  ASSERT_EQ(first.frame_keys.size(), first.frames.size());
  EXPECT_EQ(first.frames[0].dso, "/nonexistent/libfoo.so");
  EXPECT_EQ(first.frame_parts[0], 0u);  // the leaf's own frame
  EXPECT_EQ(first.frame_parts[1], 1u);  // a return address
  // Asked again, and for a later call of the same stack and mappings: the
  // same entry, not symbolized again.
  EXPECT_EQ(&frames.Of(a), &first);
  EXPECT_EQ(frames.Of(a).serial, serial_a);
  EXPECT_EQ(frames.Of(a2).serial, serial_a);
  // The same stack in another process: its own frames.
  const StackFrames::Stack& other = frames.Of(b);
  EXPECT_NE(other.serial, serial_a);
  EXPECT_EQ(other.frames[0].dso, "");
  EXPECT_EQ(frames.Of(a).serial, serial_a) << "pid 1's entry is kept beside pid 2's";
  // libbar mapped where libfoo was: the entry is made again, with libbar.
  const uint64_t serial_a3 = frames.Of(a3).serial;
  EXPECT_GT(serial_a3, serial_a);
  EXPECT_EQ(Dsos(frames.Of(a3))[0], "/nonexistent/libbar.so");
  // ... and again for a call before that (one entry per stack and process).
  EXPECT_GT(frames.Of(a).serial, serial_a3);
  EXPECT_EQ(Dsos(frames.Of(a))[0], "/nonexistent/libfoo.so");
  EXPECT_EQ(&frames.Frames(a), &frames.Of(a).frames);
}

// A recursive frame repeats the ip before it: the same key (no lookup).
TEST_F(StackFramesTest, ARepeatedIpHasTheSameKey) {
  const uint64_t ips[] = {kLib + 0x10, kCode + 0x20, kCode + 0x20, kCode + 0x20};
  const StackId stack = idx_.stacks().Intern(ips);
  sym_.maps().AddMapping(1, 1, kLib, 0x10000, 0, "/nonexistent/libfoo.so", "");
  StackFrames frames(idx_, sym_);
  const EventId id = Mmap(10, 1, 0x10000000, stack);
  const StackFrames::Stack& s = frames.Of(idx_.event(id));
  ASSERT_EQ(s.keys.size(), 4u);
  EXPECT_EQ(s.keys[1], s.keys[2]);
  EXPECT_EQ(s.keys[2], s.keys[3]);
  EXPECT_EQ(s.frames.size(), 4u);
}

// A recording with more distinct stacks than the cache keeps: it starts
// again instead of growing, and a stack made again says the same frames
// under a new serial (what was derived from the old ones is made again).
TEST_F(StackFramesTest, TheCacheIsBoundedAndAStackMadeAgainIsTheSame) {
  sym_.maps().AddMapping(1, 1, kLib, 0x10000, 0, "/nonexistent/libfoo.so", "");
  std::vector<EventId> calls;
  for (uint64_t i = 0; i < StackFrames::kMaxStacks + 10; ++i) {
    const uint64_t ips[] = {kLib + (i % 0x10000), kCode + i};
    calls.push_back(Mmap(10 + i, 1, 0x10000000 + 4096 * i, idx_.stacks().Intern(ips)));
  }
  StackFrames frames(idx_, sym_);
  const StackFrames::Stack& first = frames.Of(idx_.event(calls[0]));
  const uint64_t serial = first.serial;
  const std::vector<std::string> dsos = Dsos(first);
  for (EventId id : calls) {
    frames.Of(idx_.event(id));
    ASSERT_LE(frames.cached(), StackFrames::kMaxStacks);
  }
  const StackFrames::Stack& again = frames.Of(idx_.event(calls[0]));
  EXPECT_NE(again.serial, serial);
  EXPECT_EQ(Dsos(again), dsos);
  EXPECT_EQ(again.frames[0].dso, "/nonexistent/libfoo.so");
  EXPECT_EQ(again.frames[1].ip, kCode);
}

}  // namespace
}  // namespace pageblame::session

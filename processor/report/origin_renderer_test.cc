// The stack text that maps --json splices into each region must be exactly
// what OriginJson would print, also when one stack symbolizes differently in
// two processes; and a comm or path that is not UTF-8 must not abort a JSON
// answer.
#include "processor/report/origin_renderer.h"

#include <sys/mman.h>

#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "processor/replay/call_events_for_test.h"
#include "processor/replay/replayer.h"

namespace pageblame::report {
namespace {

using decode::Syscall;

constexpr uint64_t kAnon = MAP_PRIVATE | MAP_ANONYMOUS;
constexpr uint64_t kCode = 0x400000, kLib = 0x7f0000000000;

class OriginRendererTest : public ::testing::Test {
 protected:
  OriginRendererTest() : sym_(symbols::SymbolizerOptions{}), replayer_(&idx_, nullptr) {}

  EventId Mmap(uint64_t t, uint32_t pid, uint64_t addr, StackId stack) {
    auto [in, out] = replay::CallEvents(t, pid, pid, Syscall::kMmap,
                                        {addr, 4096, PROT_READ, kAnon | MAP_FIXED, ~0ull, 0}, addr,
                                        stack);
    replayer_.Apply(in);
    replayer_.Apply(out);
    return EventId(static_cast<uint32_t>(idx_.num_events() - 1));
  }
  // The origin as maps --json writes it: marked, with the stack spliced in.
  std::string Spliced(OriginRenderer& r, EventId id) {
    std::string text = DumpJson(r.OriginJsonStackMarked(id));
    const std::string marker = Json(std::string(OriginRenderer::kStackMarker)).dump();
    const size_t at = text.rfind(marker);
    EXPECT_NE(at, std::string::npos);
    text.replace(at, marker.size(), r.StackJsonText(idx_.event(id), 1));
    return text;
  }

  index::TraceIndex idx_;
  symbols::Symbolizer sym_;
  replay::Replayer replayer_;
};

TEST_F(OriginRendererTest, SplicedStackTextIsWhatOriginJsonPrints) {
  const uint64_t ips[] = {kLib + 0x1234, kCode + 0x10, kCode + 0x20};
  const StackId stack = idx_.stacks().Intern(ips);
  // pid 1 has the library mapped (a file, so frames name it); pid 2 does not:
  // the same stack has different frames in the two.
  sym_.AddMapping(1, 1, kLib, 0x10000, 0, "/nonexistent/libfoo.so", "");
  const EventId a = Mmap(10, 1, 0x10000000, stack);
  const EventId b = Mmap(20, 2, 0x20000000, stack);
  const EventId a2 = Mmap(30, 1, 0x30000000, stack);
  OriginRenderer r(idx_, sym_);
  for (EventId id : {a, b, a2, b, a}) {
    EXPECT_EQ(Spliced(r, id), DumpJson(r.OriginJson(id))) << "event " << id.value();
  }
  EXPECT_NE(Spliced(r, a), Spliced(r, b));
  EXPECT_NE(Spliced(r, a).find("libfoo.so"), std::string::npos);
}

TEST_F(OriginRendererTest, ACommThatIsNotUtf8PrintsReplacedInsteadOfAborting) {
  replay::TraceEvent comm;
  comm.kind = replay::TraceEvent::Kind::kComm;
  comm.time = 1;
  comm.pid = comm.tid = 7;
  comm.str = idx_.strings().Intern("bad\xff\xfename");
  replayer_.Apply(comm);
  const EventId id = Mmap(10, 7, 0x10000000, StackId());
  OriginRenderer r(idx_, sym_);
  std::string text;
  ASSERT_NO_THROW(text = DumpJson(r.OriginJson(id)));
  EXPECT_NE(text.find("\"comm\": \"bad\xef\xbf\xbd\xef\xbf\xbdname\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"stack\": []"), std::string::npos) << text;
}

}  // namespace
}  // namespace pageblame::report

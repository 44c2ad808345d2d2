// The origin text that maps --json writes directly must be exactly what
// OriginJson would print (also when one stack symbolizes differently in two
// processes, and for names that need escaping); and a comm or path that is
// not UTF-8 must not abort a JSON answer.
#include "processor/base/format.h"
#include "processor/render/origin_renderer.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "processor/base/temp_dir_for_test.h"
#include "processor/replay/call_events_for_test.h"
#include "processor/replay/replayer.h"
#include "processor/symbols/symbolizer_for_test.h"

namespace pageblame::render {
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
  // Process `pid` (its main thread) is called `name` from time 1 on.
  void Comm(uint32_t pid, const std::string& name) {
    replay::TraceEvent comm;
    comm.Reset(replay::TraceEvent::Kind::kComm);
    comm.time = 1;
    comm.pid = comm.tid = pid;
    comm.comm().comm = idx_.strings().Intern(name);
    replayer_.Apply(comm);
  }
  // The origin as maps --json writes it, `indent` spaces in, and as the DOM
  // would print it there.
  static std::string Direct(OriginRenderer& r, EventId id, int indent) {
    std::string text;
    r.AppendOriginJson(&text, id, indent);
    return text;
  }
  static std::string ViaDom(OriginRenderer& r, EventId id, int indent) {
    return absl::StrReplaceAll(DumpJson(r.OriginJson(id)),
                               {{"\n", absl::StrCat("\n", std::string(indent, ' '))}});
  }

  index::TraceIndex idx_;
  symbols::SymbolizerWithMaps sym_;
  replay::Replayer replayer_;
};

TEST_F(OriginRendererTest, DirectOriginTextIsWhatOriginJsonPrints) {
  const uint64_t ips[] = {kLib + 0x1234, kCode + 0x10, kCode + 0x20};
  const StackId stack = idx_.stacks().Intern(ips);
  // pid 1 has the library mapped (a file, so frames name it); pid 2 does not:
  // the same stack has different frames in the two.
  sym_.maps().AddMapping(1, 1, kLib, 0x10000, 0, "/nonexistent/libfoo.so", "");
  const EventId a = Mmap(10, 1, 0x10000000, stack);
  const EventId b = Mmap(20, 2, 0x20000000, stack);
  const EventId a2 = Mmap(30, 1, 0x30000000, stack);
  // Later in pid 1, another library takes libfoo's place: same stack, same
  // process, other frames.
  sym_.maps().AddMapping(1, 40, kLib, 0x10000, 0, "/nonexistent/libbar.so", "");
  const EventId a3 = Mmap(50, 1, 0x40000000, stack);
  session::StackFrames frames(idx_, sym_);
  OriginRenderer r(frames);
  for (EventId id : {a, b, a2, b, a, a3, a2, a3, EventId::Invalid()}) {
    for (int indent : {0, 2}) {
      EXPECT_EQ(Direct(r, id, indent), ViaDom(r, id, indent)) << "event " << id.value();
    }
  }
  EXPECT_NE(Direct(r, a, 2), Direct(r, b, 2));
  EXPECT_NE(Direct(r, a, 2).find("libfoo.so"), std::string::npos);
  EXPECT_EQ(Direct(r, a2, 2), Direct(r, a, 2));
  EXPECT_NE(Direct(r, a3, 2).find("libbar.so"), std::string::npos);
  EXPECT_EQ(Direct(r, a3, 2).find("libfoo.so"), std::string::npos);
  EXPECT_EQ(Direct(r, EventId::Invalid(), 2), "null");
}

TEST_F(OriginRendererTest, DirectTextEscapesNamesAsTheDomDoes) {
  // Symbol names from a perf map beside the trace, a library path and a comm
  // that need escaping or are not UTF-8, and an empty stack.
  char dir[] = "/tmp/pageblame-origin-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string map_path = absl::StrCat(dir, "/perf-4000001.map");
  {
    std::ofstream map(map_path);
    map << "1000 100 Quote\"and\\backslash\n"
        << "2000 100 Gr\xc3\xbc\xc3\x9f\xff\tname\n"
        << "3000 100 plain::Name(int)\n";
  }
  symbols::SymbolizerOptions o;
  o.trace_path = absl::StrCat(dir, "/perf.data");
  symbols::SymbolizerWithMaps sym(o);
  sym.maps().AddMapping(4000001, 1, kLib, 0x10000, 0, "/lib/we\"ird\x01\xfe.so", "");
  const uint64_t ips[] = {0x1010, 0x2020, 0x3030, kLib + 0x10, 0x9999};
  const StackId stack = idx_.stacks().Intern(ips);
  Comm(4000001, "t\"ab\tbad\xff");
  const EventId id = Mmap(10, 4000001, 0x10000000, stack);
  const EventId empty = Mmap(20, 4000001, 0x20000000, StackId());
  session::StackFrames frames(idx_, sym);
  OriginRenderer r(frames);
  const std::string text = Direct(r, id, 2);
  EXPECT_EQ(text, ViaDom(r, id, 2));
  EXPECT_EQ(Direct(r, empty, 2), ViaDom(r, empty, 2));
  EXPECT_NE(text.find("Quote\\\"and\\\\backslash"), std::string::npos) << text;
  EXPECT_NE(text.find("\"plain::Name(int)\""), std::string::npos) << text;
  EXPECT_NE(text.find("\\u0001"), std::string::npos) << text;
  std::remove(map_path.c_str());
  rmdir(dir);
}

// Issue 44: a JIT (or whoever wrote its perf map), a comm and a path can
// hold terminal controls. Text says them escaped, on the line they belong
// to; JSON has the real names, with DEL and C1 controls as \u escapes too,
// which nlohmann writes raw.
TEST_F(OriginRendererTest, TextSaysNamesEscapedAndJsonKeepsThem) {
  TempDir dir("pb_origin");
  const std::string method = "\x1b[2J\xc2\x9bX\x7f";
  std::ofstream(dir.path() + "/perf-4000002.map") << "1000 100 " << method << "\n";
  symbols::SymbolizerOptions o;
  o.trace_path = dir.path() + "/perf.data";
  symbols::SymbolizerWithMaps sym(o);
  sym.maps().AddMapping(4000002, 1, kLib, 0x10000, 0, "/lib/\x1b]0;t\x07.so", "");
  const uint64_t ips[] = {kLib + 0x10, 0x1010};
  const StackId stack = idx_.stacks().Intern(ips);
  Comm(4000002, "a\nb");
  const EventId id = Mmap(10, 4000002, 0x10000000, stack);
  session::StackFrames frames(idx_, sym);
  OriginRenderer r(frames);
  const index::CallEvent& ev = idx_.event(id);

  const std::string stack_text = r.StackText(ev, "  ");
  EXPECT_EQ(stack_text, absl::StrCat("  #0 ", Hex(kLib + 0x10), " [unknown] (/lib/\\x1b]0;t\\x07.so)\n",
                                     "  #1 0x1010 \\x1b[2J\\u009bX\\x7f+0x10 (/tmp/perf-4000002.map)\n"));
  EXPECT_NE(r.CallText(ev).find(" by a\\x0ab 4000002/4000002"), std::string::npos) << r.CallText(ev);
  EXPECT_NE(r.ShortStack(ev, 4).find("\\x1b[2J\\u009bX\\x7f"), std::string::npos) << r.ShortStack(ev, 4);

  const std::string json = Direct(r, id, 0);
  EXPECT_EQ(json, ViaDom(r, id, 0));
  EXPECT_NE(json.find("\"\\u001b[2J\\u009bX\\u007f\""), std::string::npos) << json;
  const Json back = Json::parse(json);
  EXPECT_EQ(back["stack"][1]["symbol"], method);
  EXPECT_EQ(back["comm"], "a\nb");
  EXPECT_EQ(back["stack"][0]["dso"], "/lib/\x1b]0;t\x07.so");
}

TEST(JsonControlsEscapedTest, OnlyDelAndC1ControlsChange) {
  EXPECT_EQ(JsonControlsEscaped("[\"a\x7f" "b\xc2\x80\xc2\x9f\xc2\xa0\xc3\x9c\"]"),
            "[\"a\\u007fb\\u0080\\u009f\xc2\xa0\xc3\x9c\"]");
  EXPECT_EQ(JsonControlsEscaped("{\"plain\": 1}"), "{\"plain\": 1}");
  EXPECT_EQ(Json::parse(JsonControlsEscaped(Json("\xc2\x9b" "2J\x7f").dump())), "\xc2\x9b" "2J\x7f");
}

TEST_F(OriginRendererTest, ACommThatIsNotUtf8PrintsReplacedInsteadOfAborting) {
  Comm(7, "bad\xff\xfename");
  const EventId id = Mmap(10, 7, 0x10000000, StackId());
  session::StackFrames frames(idx_, sym_);
  OriginRenderer r(frames);
  std::string text;
  ASSERT_NO_THROW(text = DumpJson(r.OriginJson(id)));
  EXPECT_NE(text.find("\"comm\": \"bad\xef\xbf\xbd\xef\xbf\xbdname\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"stack\": []"), std::string::npos) << text;
}

}  // namespace
}  // namespace pageblame::render

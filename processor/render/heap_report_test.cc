// `pageblame heap` as printed, for hand-built walks: the headline and the
// table's total are the snapshot's Totals(), unknown resident bytes are "?"
// and null (a core), the JSON's keys are docs/heap.md's contract in its
// order, and a process whose malloc is not glibc's is named, not walked.
// The text of one walk is kept as a golden file (its layout is the first
// screen users read): processor/render/testdata/heap_text.txt; after a
// change of layout that is meant, regenerate it with
//   PAGEBLAME_UPDATE_RENDER_GOLDEN=1 build/tests/render_unit_test --gtest_filter='HeapReport*'
// and read its diff with the change.
#include "processor/render/heap_report.h"

#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/format.h"

namespace pageblame::render {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::ordered_json;

heap::ArenaStats Arena(uint64_t address, bool main, uint64_t system, uint64_t free, uint64_t top,
                       std::optional<uint64_t> free_resident) {
  heap::ArenaStats a;
  a.address = address;
  a.main = main;
  a.figures.system_bytes = system;
  a.figures.free_bytes = free;
  a.figures.in_use_bytes = system - free;
  a.figures.top_bytes = top;
  a.figures.tcache_bytes = 4096;
  a.figures.fastbin_bytes = 512;
  a.figures.free_chunks = 40;
  a.figures.releasable_bytes = free - top / 2;
  a.figures.free_resident_bytes = free_resident;
  if (free_resident) a.figures.releasable_resident_bytes = *free_resident / 2;
  a.binned_chunks = 30;
  a.fastbin_chunks = 6;
  a.tcache_chunks = 4;
  a.chunks = 1000;
  return a;
}

// A live process: two arenas, resident bytes known, one arena damaged.
heap::HeapSnapshot Live() {
  heap::HeapSnapshot s;
  s.pid = 4242;
  s.glibc_version = "2.36";
  s.layout = heap::LayoutSource::kDwarf;
  s.layout_from = "/usr/lib/debug/.build-id/ab/cdef.debug";
  s.time = 12345678901000;
  s.attempts = 1;
  s.arenas = {Arena(0x7f0f13c23c60, true, 9 << 20, 8 << 20, 4 << 20, 4 << 20),
              Arena(0x7f0e00000020, false, 64 << 20, 1 << 20, 256 << 10, 512 << 10)};
  s.arenas[1].damage = "bin 12: a cycle after 3 chunks";
  s.mmapped_count = 2;
  s.mmapped_bytes = 80 << 20;
  s.threads = 4;
  s.cpus = 2;
  return s;
}

// The same walk of a core: nothing is known of residency.
heap::HeapSnapshot Core() {
  heap::HeapSnapshot s = Live();
  s.time.reset();
  s.cpus.reset();
  for (heap::ArenaStats& a : s.arenas) {
    a.figures.free_resident_bytes.reset();
    a.figures.releasable_resident_bytes.reset();
  }
  return s;
}

// The cells of the arena table's line that starts with `first`.
std::vector<std::string> TableRow(const std::string& text, const std::string& first) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    absl::string_view l = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::StartsWith(l, first + " ")) continue;
    std::vector<std::string> cells;
    for (absl::string_view c : absl::StrSplit(l, "  ", absl::SkipEmpty())) cells.emplace_back(absl::StripAsciiWhitespace(c));
    return cells;
  }
  return {};
}

TEST(HeapReportTest, TheHeadlineAndTheTotalRowAreTheSnapshotsTotals) {
  const heap::HeapSnapshot s = Live();
  const heap::HeapFigures t = s.Totals();
  const std::string text = HeapText(s, "pid 4242");
  EXPECT_TRUE(absl::StartsWith(
      text, absl::StrCat("pid 4242: ", HumanBytes(t.system_bytes), " in 2 arenas: ", HumanBytes(t.in_use_bytes),
                         " in use, ", HumanBytes(t.free_bytes), " free held by glibc (", HumanBytes(*t.free_resident_bytes),
                         " resident); malloc_trim(0) would return ", HumanBytes(t.releasable_bytes), " (",
                         HumanBytes(*t.releasable_resident_bytes), " resident)\n")))
      << text;
  // arena, system, in use, free, free resident, tcache, fastbins, top, trim returns, of it resident
  const std::vector<std::string> total = TableRow(text, "total");
  ASSERT_EQ(total.size(), 10u) << text;
  EXPECT_EQ(total[1], HumanBytes(t.system_bytes));
  EXPECT_EQ(total[2], HumanBytes(t.in_use_bytes));
  EXPECT_EQ(total[3], HumanBytes(t.free_bytes));
  EXPECT_EQ(total[4], HumanBytes(*t.free_resident_bytes));
  EXPECT_EQ(total[8], HumanBytes(t.releasable_bytes));
  const std::vector<std::string> main = TableRow(text, "0x7f0f13c23c60");
  ASSERT_EQ(main.size(), 10u);
  EXPECT_EQ(main[0], "0x7f0f13c23c60 main");
  EXPECT_EQ(main[1], HumanBytes(s.arenas[0].figures.system_bytes));
  EXPECT_EQ(TableRow(text, "0x7f0e00000020")[0], "0x7f0e00000020 (damaged)");
  EXPECT_THAT(text, HasSubstr("\narena 0x7f0e00000020 is damaged: bin 12: a cycle after 3 chunks\n"));
  EXPECT_THAT(text, HasSubstr("\nmmapped chunks: 2, 80.0 MiB (outside the arenas"));
  EXPECT_THAT(text, HasSubstr("\n4 threads, 2 arenas; glibc's limit: 16 (8 per core, 2 cores)\n"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("a core")));
}

TEST(HeapReportTest, ResidentBytesOfACoreAreUnknownNotZero) {
  const heap::HeapSnapshot s = Core();
  const std::string text = HeapText(s, "core.1234");
  EXPECT_THAT(text, HasSubstr(" free held by glibc; malloc_trim(0) would return "));
  EXPECT_THAT(text, ::testing::Not(HasSubstr(" resident)")));
  const std::vector<std::string> total = TableRow(text, "total");
  ASSERT_EQ(total.size(), 10u);
  EXPECT_EQ(total[4], "?");
  EXPECT_EQ(total[9], "?");
  EXPECT_THAT(text, HasSubstr("(a core: which free pages were resident is not known)\n"));
  EXPECT_THAT(text, HasSubstr("glibc's limit: 8 per core of the machine it ran on (arena_max not set)"));
  const Json j = HeapJson(s);
  EXPECT_TRUE(j["snapshot_time"].is_null());
  EXPECT_TRUE(j["arena_limit"].is_null());
  EXPECT_TRUE(j["total"]["free_resident_bytes"].is_null());
  for (const Json& a : j["arenas"]) EXPECT_TRUE(a["releasable_resident_bytes"].is_null());
}

// Every key of docs/heap.md's JSON example, in its order (nested objects
// in place), and the total the arenas' sum.
TEST(HeapReportTest, TheJsonIsDocsHeapMdsContract) {
  std::ifstream doc(std::string(PAGEBLAME_SOURCE_DIR) + "/docs/heap.md");
  const std::string md((std::istreambuf_iterator<char>(doc)), std::istreambuf_iterator<char>());
  const size_t contract = md.find("## Definitions (the JSON contract)");
  ASSERT_NE(contract, std::string::npos);
  const size_t begin = md.find("```json\n", contract), end = md.find("```\n", begin + 8);
  ASSERT_NE(end, std::string::npos);
  const std::string example = md.substr(begin, end - begin);
  std::vector<std::string> documented;
  static const std::regex kKey(R"re("([a-z_]+)":)re");
  for (std::sregex_iterator it(example.begin(), example.end(), kKey), e; it != e; ++it) documented.push_back((*it)[1]);

  heap::HeapSnapshot s = Live();
  s.arenas.resize(1);  // the example has one arena
  const Json j = HeapJson(s);
  std::vector<std::string> keys;
  std::function<void(const Json&)> walk = [&](const Json& v) {
    if (v.is_object()) {
      for (const auto& [k, child] : v.items()) {
        keys.push_back(k);
        walk(child);
      }
    } else if (v.is_array()) {
      for (const Json& child : v) walk(child);
    }
  };
  walk(j);
  EXPECT_EQ(keys, documented);
  EXPECT_EQ(j["allocator"], "glibc");
  EXPECT_EQ(j["snapshot_time"], 12345.678901);
  EXPECT_EQ(j["arenas"][0]["kind"], "main");
  EXPECT_EQ(j["glibc"]["layout"], "dwarf");
  EXPECT_EQ(j["arena_limit"], 16);

  const Json two = HeapJson(Live());
  for (const char* k : {"system_bytes", "in_use_bytes", "free_bytes", "releasable_bytes", "free_resident_bytes"}) {
    EXPECT_EQ(two["total"][k], two["arenas"][0][k].get<uint64_t>() + two["arenas"][1][k].get<uint64_t>()) << k;
  }
  EXPECT_EQ(two["arenas"][1]["damage"], "bin 12: a cycle after 3 chunks");
  EXPECT_TRUE(two["arenas"][0]["damage"].is_null());
}

TEST(HeapReportTest, AnotherAllocatorIsNamedNotWalked) {
  heap::HeapSnapshot s;
  s.pid = 77;
  s.allocator = heap::Allocator::kJemalloc;
  s.note = "malloc is jemalloc's (/usr/lib/libjemalloc.so.2): its heap is not glibc's, not walked";
  EXPECT_EQ(HeapText(s, "pid 77"), "pid 77: " + s.note + "\n");
  const Json j = HeapJson(s);
  EXPECT_EQ(j["allocator"], "jemalloc");
  EXPECT_TRUE(j["glibc"].is_null());
  EXPECT_TRUE(j["arenas"].empty());
  EXPECT_EQ(j["note"], s.note);
}

TEST(HeapReportTest, TheTextsLayoutIsTheGoldenOne) {
  const std::string path = std::string(PAGEBLAME_SOURCE_DIR) + "/processor/render/testdata/heap_text.txt";
  heap::HeapSnapshot torn = Live();
  torn.arenas[1].torn = true;
  torn.attempts = 3;
  const std::string text = HeapText(Live(), "pid 4242") + "\n" + HeapText(torn, "pid 4242") + "\n" +
                           HeapText(Core(), "core.1234");
  if (const char* update = std::getenv("PAGEBLAME_UPDATE_RENDER_GOLDEN"); update && *update == '1') {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  }
  std::ifstream f(path, std::ios::binary);
  ASSERT_TRUE(f) << path << ": missing (see this file's header to make it)";
  std::stringstream golden;
  golden << f.rdbuf();
  EXPECT_EQ(text, golden.str());
}

}  // namespace
}  // namespace pageblame::render

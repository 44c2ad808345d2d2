// `pageblame diff` and `pageblame attribute` as users run them: the
// contract's JSON, folded output that flame-graph tools read, one-line errors.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/regions/page_diff.h"
#include "processor/regions/region_table_reader.h"
#include "tests/cli_runner.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

using ::testing::HasSubstr;

std::string Sample(const std::string& name) { return SourceDir() + "/processor/regions/testdata/" + name; }

std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = ScratchPath(name);
  std::ofstream(path) << text;
  return path;
}

const ManifestRow& MainRow() {
  static const ManifestRow row = [] {
    for (const ManifestRow& r : ReadManifest()) {
      if (r["trace"] == "rules-record.data" && r["role"] == "main") return r;
    }
    ADD_FAILURE() << "no rules-record.data main row";
    std::abort();
  }();
  return row;
}

TEST(AttributeCliTest, DiffJsonMatchesTheLibraryOnThePeerSamples) {
  CliRun r = Pageblame("diff --json " + Sample("windbg-address.output") + " " + Sample("sos-maddress.output"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  auto a = regions::RegionTableReader::DetectAndParse(Sample("windbg-address.output"));
  auto m = regions::RegionTableReader::DetectAndParse(Sample("sos-maddress.output"));
  ASSERT_TRUE(a.ok() && m.ok());
  regions::DiffResult d = regions::Diff(*a, *m);
  EXPECT_EQ(j["unaccounted"]["bytes"].get<uint64_t>(), d.unaccounted.bytes);
  EXPECT_EQ(j["unaccounted"]["pieces"].size(), d.unaccounted.pieces.size());
  EXPECT_EQ(j["runtime_only"]["bytes"].get<uint64_t>(), d.runtime_only.bytes);
  EXPECT_EQ(j["runtime_only"]["pieces"].size(), d.runtime_only.pieces.size());
  uint64_t sum = 0;
  for (const auto& p : j["unaccounted"]["pieces"]) sum += p["bytes"].get<uint64_t>();
  EXPECT_EQ(sum, d.unaccounted.bytes);
  // The text form prints the same total.
  CliRun t = Pageblame("diff " + Sample("windbg-address.output") + " " + Sample("sos-maddress.output"));
  ASSERT_EQ(t.exit_code, 0);
  EXPECT_THAT(t.out, HasSubstr("start-address match"));
}

TEST(AttributeCliTest, DiffErrorsNameFileAndLine) {
  std::string bad = WriteTemp("bad-windbg.txt",
                              "BaseAddress EndAddress+1 RegionSize Type State Protect Usage\n"
                              "+ 1`00000000 1`0000zz00 0`00001000 MEM_PRIVATE MEM_COMMIT PAGE_READWRITE x\n");
  CliRun r = Pageblame("diff " + bad + " " + Sample("sos-maddress.output"));
  ExpectOneLineError(r, bad + ":2:");
  EXPECT_EQ(r.exit_code, 1);
  ExpectOneLineError(Pageblame("diff /nonexistent/a.txt " + Sample("sos-maddress.output")), "/nonexistent/a.txt");
  std::string empty = WriteTemp("empty.txt", "");
  ExpectOneLineError(Pageblame("diff " + empty + " " + empty), "empty");
  EXPECT_EQ(Pageblame("diff " + bad).exit_code, 2);
}

TEST(AttributeCliTest, DiffReportsSkippedRowsOnStderr) {
  std::string two_sections = WriteTemp(
      "page-diff.txt",
      "Memory regions found by windbg address but not by sos maddress: 1\n"
      "1000 - 3000 Size: 8KB    Type: MEM_PRIVATE  State: MEM_COMMIT   Protection: PAGE_READWRITE  Kind: <unknown>  Usage: [...]\n"
      "Total unaccounted size: 8KB\n"
      "Memory regions found by sos maddress but not by windbg address: 1\n"
      "8000 - 9000 Size: 4KB    Type: MEM_PRIVATE  State: MEM_COMMIT   Protection: PAGE_READWRITE  Kind: LoaderHeap  Usage:\n");
  std::string list = WriteTemp("list.txt", "0x2000-0x2800\n");
  CliRun r = Pageblame("diff --json " + two_sections + " " + list);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("pageblame: " + two_sections + ": "));
  EXPECT_THAT(r.err, HasSubstr("skipped (first: line "));
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["unaccounted"]["bytes"], 0x2000 - 0x800);
  ASSERT_EQ(j["unaccounted"]["pieces"].size(), 2u);
  EXPECT_EQ(j["runtime_only"]["bytes"], 0);
}

TEST(AttributeCliTest, AttributeJsonFollowsTheContract) {
  const ManifestRow& row = MainRow();
  CliRun r = Pageblame("attribute --format json --by create -i " + TracePath(row["trace"]) + " --pid " +
                       row["pid"] + " --regions " + TracePath(row["maps"]));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 6u);  // regions, stacks, rss, rss_snapshot_time, heap_snapshot_time, methods
  // A trace without residency snapshots: resident bytes unknown, never 0.
  EXPECT_TRUE(j["rss"].is_null());
  EXPECT_TRUE(j["rss_snapshot_time"].is_null());
  EXPECT_TRUE(j["heap_snapshot_time"].is_null());  // nor heap snapshots
  std::vector<MapsRow> maps = ReadMapsFile(TracePath(row["maps"]));
  ASSERT_EQ(j["regions"].size(), maps.size());
  uint64_t created = 0;
  for (size_t i = 0; i < maps.size(); ++i) {
    const auto& reg = j["regions"][i];
    std::set<std::string> keys;
    for (const auto& [k, v] : reg.items()) keys.insert(k);
    keys.erase("started_by");  // thread stacks only
    // Malloc arena kinds: in use and free, unknown without heap snapshots.
    if (reg["kind"] == "malloc" || reg["kind"] == "heap") {
      EXPECT_TRUE(reg["in_use_bytes"].is_null() && reg["free_bytes"].is_null()) << reg.dump();
      keys.erase("in_use_bytes");
      keys.erase("free_bytes");
    }
    EXPECT_EQ(keys, (std::set<std::string>{"start", "end", "bytes", "kind", "stacks", "before_trace_bytes",
                                           "unmapped_bytes", "rss", "table_rss"}));
    EXPECT_TRUE(reg["rss"].is_null());
    EXPECT_TRUE(reg["table_rss"].is_null());  // a maps file has no Rss: unknown, not 0
    EXPECT_EQ(std::stoull(reg["start"].get<std::string>(), nullptr, 16), maps[i].start);
    EXPECT_EQ(reg["bytes"].get<uint64_t>(), maps[i].end - maps[i].start);
    uint64_t sum = reg["before_trace_bytes"].get<uint64_t>() + reg["unmapped_bytes"].get<uint64_t>();
    for (const auto& s : reg["stacks"]) {
      sum += s["bytes"].get<uint64_t>();
      created += s["bytes"].get<uint64_t>();
      for (const char* k : {"syscall", "time", "pid", "tid", "comm", "stack"}) {
        ASSERT_TRUE(s["origin"].contains(k)) << k;
      }
    }
    EXPECT_EQ(sum, reg["bytes"].get<uint64_t>()) << reg.dump();
  }
  uint64_t ranked = 0;
  std::pair<uint64_t, uint64_t> last{UINT64_MAX, UINT64_MAX};  // committed first, then bytes
  for (const auto& s : j["stacks"]) {
    const bool arena = s["kind"] == "malloc" || s["kind"] == "heap";
    ASSERT_EQ(s.size(), arena ? 10u : 8u);
    if (arena) {
      EXPECT_TRUE(s["in_use_bytes"].is_null() && s["free_bytes"].is_null());
    }
    EXPECT_TRUE(s["rss"].is_null());
    EXPECT_TRUE(s["table_rss"].is_null());
    EXPECT_TRUE(s["table_rss_partly"].is_null());
    uint64_t b = s["bytes"];
    const std::pair<uint64_t, uint64_t> rank{s["committed_bytes"].get<uint64_t>(), b};
    EXPECT_LE(rank, last);
    EXPECT_LE(rank.first, b);
    last = rank;
    ranked += b;
    EXPECT_GE(s["regions"].get<int>(), 1);
    EXPECT_FALSE(s["origin"].is_null());
  }
  EXPECT_EQ(ranked, created);
  EXPECT_EQ(created, ProcessMadePages(maps, row["exe"]).Bytes());
}

TEST(AttributeCliTest, FoldedOutputIsFlameGraphInput) {
  const ManifestRow& row = MainRow();
  CliRun r = Pageblame("attribute --format folded -i " + TracePath(row["trace"]) + " --pid " + row["pid"] +
                       " --regions " + TracePath(row["maps"]));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  uint64_t total = 0;
  int lines = 0;
  for (absl::string_view line : absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
    size_t sp = line.rfind(' ');
    ASSERT_NE(sp, absl::string_view::npos) << line;
    uint64_t n;
    ASSERT_TRUE(absl::SimpleAtoi(line.substr(sp + 1), &n)) << line;
    total += n;
    ++lines;
  }
  EXPECT_GT(lines, 10);
  uint64_t bytes = 0;
  for (const MapsRow& m : ReadMapsFile(TracePath(row["maps"]))) bytes += m.end - m.start;
  EXPECT_EQ(total, bytes);
  EXPECT_THAT(r.out, HasSubstr(";main;do_mmap_anon "));
}

TEST(AttributeCliTest, AttributeNeedsPidWhenSeveralProcessesHaveTheBytes) {
  const ManifestRow& row = MainRow();
  CliRun r = Pageblame("attribute -i " + TracePath(row["trace"]) + " --regions " + TracePath(row["maps"]));
  ExpectOneLineError(r, "--pid");
  EXPECT_THAT(r.err, HasSubstr("pid " + row["pid"]));
}

TEST(AttributeCliTest, AttributeFromTwoTablesInOneCommand) {
  // The peer samples are another process: with --pid every byte of the diff's
  // unaccounted pieces is "not mapped" in this trace, and the totals still add up.
  const ManifestRow& row = MainRow();
  CliRun r = Pageblame("attribute --json -i " + TracePath(row["trace"]) + " --pid " + row["pid"] +
                       " --address " + Sample("windbg-address.output") + " --maddress " +
                       Sample("sos-maddress.output"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  CliRun d = Pageblame("diff --json " + Sample("windbg-address.output") + " " + Sample("sos-maddress.output"));
  nlohmann::json dj = nlohmann::json::parse(d.out);
  ASSERT_EQ(j["regions"].size(), dj["unaccounted"]["pieces"].size());
  uint64_t unmapped = 0;
  for (size_t i = 0; i < j["regions"].size(); ++i) {
    EXPECT_EQ(j["regions"][i]["start"], dj["unaccounted"]["pieces"][i]["start"]);
    unmapped += j["regions"][i]["unmapped_bytes"].get<uint64_t>();
  }
  EXPECT_EQ(unmapped, dj["unaccounted"]["bytes"].get<uint64_t>());
  // Without --pid nobody has these bytes: say so, naming the pids.
  ExpectOneLineError(Pageblame("attribute -i " + TracePath(row["trace"]) + " --address " +
                               Sample("windbg-address.output") + " --maddress " + Sample("sos-maddress.output")),
                     "none of the");
}

TEST(AttributeCliTest, AttributeUsageErrors) {
  const std::string trace = " -i " + TracePath(MainRow()["trace"]);
  EXPECT_EQ(Pageblame("attribute" + trace).exit_code, 2);  // no regions
  EXPECT_EQ(Pageblame("attribute" + trace + " --regions x --address y --maddress z").exit_code, 2);
  EXPECT_EQ(Pageblame("attribute" + trace + " --address y").exit_code, 2);
  EXPECT_EQ(Pageblame("attribute" + trace + " --regions " + TracePath(MainRow()["maps"]) + " --format svg").exit_code, 2);
  std::string bad = WriteTemp("bad-list.txt", "0x1000-0x3000\nnot an address\n");
  CliRun r = Pageblame("attribute" + trace + " --regions " + bad);
  ExpectOneLineError(r, bad + ":2:");
  EXPECT_EQ(r.exit_code, 1);
}

}  // namespace
}  // namespace pageblame::testing

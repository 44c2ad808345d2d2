// `pageblame heap` as users run it, without starting other programs: usage
// mistakes (exit 2), targets that cannot be read (exit 1, one line naming
// them), and a walk of this test process itself (it waits in popen while
// pageblame reads it): the JSON contract's keys, totals equal to the sum of
// the arenas, in-use plus free equal to system bytes.
#include <unistd.h>

#include <cstdlib>

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/cli_runner.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

using Json = nlohmann::json;

TEST(HeapCliTest, UsageMistakesAreExitTwo) {
  for (const char* args : {"heap", "heap -p 12 core", "heap -p abc", "heap -p 0", "heap a b", "heap --frobnicate x"}) {
    SCOPED_TRACE(args);
    CliRun r = Pageblame(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
}

TEST(HeapCliTest, UnreadableTargetsAreOneLineErrors) {
  ExpectOneLineError(Pageblame("heap -p 999999999"), "no process has pid 999999999");
  ExpectOneLineError(Pageblame("heap " + TracePath("alloc-fp.data")), "not an ELF core");
  ExpectOneLineError(Pageblame("heap /nonexistent/core"), "/nonexistent/core");
  ExpectOneLineError(Pageblame("heap " + TracePath("bin/rules")), "not a core dump");
}

// heap -i TRACE: the snapshots record took, from TRACE.heap.
TEST(HeapCliTest, RecordedSnapshotsNeedAPidAndAHeapFile) {
  const std::string trace = TracePath("alloc-fp.data");
  for (const std::string& args : {"heap -i " + trace, "heap -i " + trace + " --pid 12115 core",
                                 std::string("heap -p 12 --at end"), "heap -i " + trace + " --pid 1"}) {
    SCOPED_TRACE(args);
    CliRun r = Pageblame(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
  CliRun none = Pageblame("heap -i " + trace + " --pid 12115");
  EXPECT_EQ(none.exit_code, 1);
  ExpectOneLineError(none, "no heap snapshots: " + trace + ".heap does not exist");
  // A broken TRACE.heap is an error naming it and the offset.
  const std::string dir = ScratchPath("heap_cli_broken");
  ASSERT_EQ(system(absl::StrCat("rm -rf ", dir, " && mkdir -p ", dir, " && cp ", trace, " ", dir, "/t.data && printf "
                                "'PBHEAP01\\001\\0\\0\\0' > ", dir, "/t.data.heap").c_str()),
            0);
  CliRun broken = Pageblame(absl::StrCat("heap -i ", dir, "/t.data --pid 12115 --no-index"));
  EXPECT_EQ(broken.exit_code, 1);
  ExpectOneLineError(broken, dir + "/t.data.heap: offset 12: truncated file header");
  // Other commands answer without it, with a warning.
  CliRun maps = Pageblame(absl::StrCat("maps -i ", dir, "/t.data --no-index"));
  EXPECT_EQ(maps.exit_code, 0) << maps.err;
  EXPECT_THAT(maps.err, ::testing::HasSubstr("t.data.heap: offset 12: truncated file header; in use and free bytes "
                                             "are left out"));
}

TEST(HeapCliTest, WalksThisProcess) {
  if (geteuid() != 0) GTEST_SKIP() << "reading another process's memory needs root here";
  CliRun r = Pageblame(absl::StrCat("heap --json -p ", getpid()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["pid"], getpid());
  EXPECT_EQ(j["allocator"], "glibc");
  EXPECT_TRUE(j["snapshot_time"].is_number());
  ASSERT_GE(j["arenas"].size(), 1u);
  const std::vector<std::string> fields = {"system_bytes", "in_use_bytes", "free_bytes", "tcache_bytes",
                                           "fastbin_bytes", "top_bytes", "free_chunks", "free_resident_bytes",
                                           "releasable_bytes", "releasable_resident_bytes"};
  Json sum = Json::object();
  for (const Json& a : j["arenas"]) {
    EXPECT_TRUE(a["address"].get<std::string>().rfind("0x", 0) == 0);
    EXPECT_TRUE(a["kind"] == "main" || a["kind"] == "thread");
    EXPECT_TRUE(a["damage"].is_null()) << a["damage"];
    for (const std::string& f : fields) {
      ASSERT_TRUE(a[f].is_number_unsigned()) << f;
      sum[f] = sum.value(f, uint64_t{0}) + a[f].get<uint64_t>();
    }
    EXPECT_EQ(a["in_use_bytes"].get<uint64_t>() + a["free_bytes"].get<uint64_t>(), a["system_bytes"].get<uint64_t>());
    EXPECT_LE(a["free_resident_bytes"].get<uint64_t>(), a["free_bytes"].get<uint64_t>());
    EXPECT_LE(a["releasable_bytes"].get<uint64_t>(), a["free_bytes"].get<uint64_t>());
  }
  EXPECT_EQ(j["arenas"][0]["kind"], "main");
  for (const std::string& f : fields) EXPECT_EQ(j["total"][f], sum[f]) << f;
  EXPECT_TRUE(j["mmapped_chunks"]["count"].is_number_unsigned());
  EXPECT_TRUE(j["mmapped_chunks"]["bytes"].is_number_unsigned());
  // The text's first line says it in one sentence.
  CliRun t = Pageblame(absl::StrCat("heap -p ", getpid()));
  EXPECT_THAT(t.out, ::testing::ContainsRegex("^pid [0-9]+: .* in [0-9]+ arenas?: .* in use, .* free held by glibc "
                                              "\\(.* resident\\); malloc_trim\\(0\\) would return "));
}

}  // namespace
}  // namespace pageblame::testing

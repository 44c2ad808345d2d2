// Heap snapshots while recording (issue 39), with glibc as the oracle:
// `pageblame record --rss-every 0.2 -- arena_mix DIR 1` (traces/src/arena_mix.c:
// two arenas, each with kept blocks, 8 MiB blocks allocated and freed again
// after glibc's dynamic mmap threshold rose, fragmentation, leftovers),
// released from its pause once snapshots of it were taken (it calls
// malloc_trim(0), so the trace lasts past them), then stopped with SIGINT.
//   - TRACE.heap was made beside the trace (0600) and the summary says how
//     many heap snapshots and their bytes;
//   - `heap -i TRACE --pid PID --at T` (the last snapshot at the pause) equals the program's
//     own malloc_info and mallinfo2 written at the pause, as a live walk
//     does (heap_live_test.cc);
//   - `maps --json` splits every arena region; its free bytes are the
//     snapshot's;
//   - per stack (`attribute` over the process's /proc maps read at the
//     pause, and `growth`): churn_8m, which frees every block, has its arena
//     bytes mostly free ("freed; held by glibc"), keep_64k and keep_small,
//     which keep theirs, in use; the free bytes credited to stacks are the
//     snapshot's free bytes; the in-use growth is known where both ends
//     are (a heap snapshot, or nothing mapped).
// Live: runs perf and a program.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "processor/heap/heap_snapshot_file.h"
#include "profile.pb.h"
#include "tests/cli_runner.h"
#include "tests/glibc_truth.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

Json JsonOf(const std::string& args) {
  CliRun r = Pageblame(args);
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
  Json j = Json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out;
  return j;
}

// The recording, made once for every test below.
class HeapRecordLiveTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (geteuid() != 0) return;
    dir_ = ScratchPath("heap-record");
    std::system(absl::StrCat("rm -rf ", dir_, " && mkdir -p ", dir_, "/out").c_str());
    int in[2];
    if (pipe(in) != 0) return;
    const std::string pageblame = std::string(PAGEBLAME_BINARY_DIR) + "/bin/pageblame";
    const std::string mix = std::string(PAGEBLAME_BINARY_DIR) + "/tests/arena_mix";
    const pid_t record = fork();
    if (record == 0) {
      dup2(in[0], 0);
      close(in[1]);
      freopen((dir_ + "/record.err").c_str(), "w", stderr);
      freopen("/dev/null", "w", stdout);
      execl(pageblame.c_str(), pageblame.c_str(), "record", "--rss-every", "0.2", "-o", (dir_ + "/t.data").c_str(),
            "--", mix.c_str(), (dir_ + "/out").c_str(), "1", nullptr);
      _exit(127);
    }
    close(in[0]);
    for (int i = 0; i < 1500 && pid_ == 0; ++i) {
      std::istringstream(ReadText(dir_ + "/out/ready")) >> pid_;
      if (pid_ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    // Periodic snapshots of the paused program (walks spaced as record
    // spaces them), then its mappings as the kernel has them.
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    if (pid_ != 0) maps_ = ReadText(absl::StrCat("/proc/", pid_, "/maps"));
    std::ofstream(dir_ + "/maps.txt") << maps_;
    // Released: it calls malloc_trim(0), whose brk and madvise calls make
    // the trace last past the snapshots at the pause (a moment of the trace
    // can then name them).
    released_ = Now();
    if (write(in[1], "\n", 1) != 1) return;
    for (int i = 0; i < 500 && ReadText(dir_ + "/out/trim.txt").empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kill(record, SIGINT);  // the stop snapshot, then perf ends the program
    int status = 0;
    waitpid(record, &status, 0);
    close(in[1]);
    record_status_ = status;
  }
  static uint64_t Now() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<uint64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
  }
  // The last heap snapshot taken at the pause (before the release), as
  // --at takes it (rounded up to the microsecond: at or after it).
  std::string AtPause() const {
    absl::StatusOr<heap::HeapSnapshotFile> f = heap::ReadHeapSnapshotFile(Trace() + ".heap");
    EXPECT_TRUE(f.ok()) << f.status();
    uint64_t last = 0;
    for (const heap::HeapSnapshot& s : f.ok() ? f->snapshots : std::vector<heap::HeapSnapshot>()) {
      if (s.pid == static_cast<uint32_t>(pid_) && s.time && *s.time < released_) last = std::max(last, *s.time);
    }
    EXPECT_NE(last, 0u) << "no heap snapshot at the pause";
    return absl::StrFormat("%.6f", static_cast<double>((last + 999) / 1000) / 1e6);
  }
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "recording needs root here";
    ASSERT_NE(pid_, 0) << "arena_mix never paused: " << ReadText(dir_ + "/record.err");
    ASSERT_TRUE(WIFEXITED(record_status_) && WEXITSTATUS(record_status_) == 0) << ReadText(dir_ + "/record.err");
  }
  std::string Trace() const { return dir_ + "/t.data"; }
  std::string Pid() const { return absl::StrCat(" --pid ", pid_); }

  static std::string dir_;
  static int pid_;
  static int record_status_;
  static std::string maps_;
  static uint64_t released_;
};
std::string HeapRecordLiveTest::dir_;
int HeapRecordLiveTest::pid_ = 0;
int HeapRecordLiveTest::record_status_ = -1;
std::string HeapRecordLiveTest::maps_;
uint64_t HeapRecordLiveTest::released_ = 0;

TEST_F(HeapRecordLiveTest, TheHeapFileIsMadeAndTheSummarySaysItsCost) {
  struct stat st;
  ASSERT_EQ(lstat((Trace() + ".heap").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  const std::string err = ReadText(dir_ + "/record.err");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(err, m, std::regex(R"((\d+) heap snapshots \(([0-9.]+ [KM]iB)\) in (\S+); a walk took ([0-9.]+) ms on average)")))
      << err;
  EXPECT_GE(std::stoi(m[1].str()), 2) << "periodic ones at the pause, and the stop one";
  EXPECT_EQ(m[3].str(), Trace() + ".heap");
}

TEST_F(HeapRecordLiveTest, TheSnapshotAtThePauseIsWhatGlibcSaid) {
  const Json j = JsonOf("heap --json -i " + Trace() + Pid() + " --at " + AtPause());
  const std::vector<MallocInfoHeap> info = ParseMallocInfo(ReadText(dir_ + "/out/info.xml"));
  ASSERT_EQ(info.size(), 2u) << "the main thread and one worker each have an arena";
  ASSERT_EQ(j["arenas"].size(), info.size());
  EXPECT_EQ(j["pid"], pid_);
  EXPECT_EQ(j["allocator"], "glibc");
  EXPECT_TRUE(j["snapshot_time"].is_number());
  for (size_t i = 0; i < info.size(); ++i) {
    const Json& a = j["arenas"][i];
    SCOPED_TRACE(absl::StrCat("arena ", i));
    EXPECT_TRUE(a["damage"].is_null()) << a["damage"];
    EXPECT_EQ(a["system_bytes"].get<uint64_t>(), info[i].system);
    EXPECT_EQ(a["fastbin_bytes"].get<uint64_t>(), info[i].fast);
    // malloc_info's "rest" carries one PREV_INUSE bit per binned chunk.
    EXPECT_EQ(a["free_bytes"].get<uint64_t>() - a["tcache_bytes"].get<uint64_t>() + a["binned_chunks"].get<uint64_t>(),
              info[i].fast + info[i].rest);
    EXPECT_TRUE(a["free_resident_bytes"].is_number()) << "resident figures from the residency snapshot";
  }
  const std::map<std::string, uint64_t> m2 = ParseNumbers(ReadText(dir_ + "/out/mallinfo2.txt"));
  const Json& t = j["total"];
  EXPECT_EQ(t["system_bytes"].get<uint64_t>(), m2.at("arena"));
  EXPECT_EQ(t["in_use_bytes"].get<uint64_t>() + t["tcache_bytes"].get<uint64_t>(), m2.at("uordblks"));
  EXPECT_EQ(j["mmapped_chunks"]["bytes"].get<uint64_t>(), m2.at("hblkhd"));
  // The same text a live walk prints.
  CliRun text = Pageblame("heap -i " + Trace() + Pid() + " --at " + AtPause());
  EXPECT_THAT(text.out, HasSubstr(absl::StrCat("pid ", pid_, ": ")));
  EXPECT_THAT(text.out, HasSubstr("free held by glibc"));
  // At the trace's start no snapshot of this program exists yet (one of
  // the pid taken before its exec is perf's heap, never shown as its).
  CliRun before = Pageblame("heap -i " + Trace() + Pid() + " --at +0");
  EXPECT_EQ(before.exit_code, 1);
  ExpectOneLineError(before, absl::StrCat("no heap snapshot of pid ", pid_, " at or before"));
}

// The methods of attribute --json by name ("churn_8m -> malloc" and so on).
std::map<std::string, Json> Methods(const Json& j) {
  std::map<std::string, Json> out;
  for (const Json& m : j["methods"]) out[m["method"].get<std::string>()] = m;
  return out;
}

bool MostlyFree(const Json& o, const std::string& prefix = "") {
  const uint64_t in_use = o[prefix + "in_use_bytes"].get<uint64_t>(), free = o[prefix + "free_bytes"].get<uint64_t>();
  return in_use * 10 < in_use + free;
}

TEST_F(HeapRecordLiveTest, PerStackTheFreeingFunctionIsFreeAndTheKeepingOnesInUse) {
  const std::string args = "attribute -i " + Trace() + Pid() + " --at " + AtPause() + " --regions " + dir_ + "/maps.txt";
  const Json j = JsonOf(args + " --json");
  ASSERT_TRUE(j["heap_snapshot_time"].is_number());
  const std::map<std::string, Json> m = Methods(j);
  ASSERT_TRUE(m.count("churn_8m") && m.count("keep_64k") && m.count("keep_small")) << j["methods"].dump();
  const Json& churn = m.at("churn_8m");
  EXPECT_TRUE(churn["in_use_bytes"].is_number());
  EXPECT_GE(churn["free_bytes"].get<uint64_t>(), uint64_t{8} << 20) << "an 8 MiB block kept free in an arena";
  EXPECT_TRUE(MostlyFree(churn)) << churn.dump();
  for (const char* kept : {"keep_64k", "keep_small"}) {
    EXPECT_FALSE(MostlyFree(m.at(kept))) << m.at(kept).dump();
    EXPECT_GT(m.at(kept)["in_use_bytes"].get<uint64_t>(), m.at(kept)["free_bytes"].get<uint64_t>()) << kept;
  }
  // The free bytes credited to stacks are the snapshot's free bytes: every
  // arena page was made by a traced call.
  const Json heap = JsonOf("heap --json -i " + Trace() + Pid() + " --at " + AtPause());
  uint64_t free = 0;
  for (const Json& s : j["stacks"]) {
    if (!s.contains("free_bytes")) continue;
    free += s["free_bytes"].get<uint64_t>();
    EXPECT_LE(s["in_use_bytes"].get<uint64_t>() + s["free_bytes"].get<uint64_t>(), s["committed_bytes"].get<uint64_t>());
  }
  EXPECT_EQ(free, heap["total"]["free_bytes"].get<uint64_t>());
  // Text: the in use column, the freed method said so, arena rows marked.
  CliRun text = Pageblame(args);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("in use"));
  EXPECT_TRUE(std::regex_search(text.out, std::regex(R"(freed; held by glibc +\d+ +\d+ +\d+ +malloc\* +churn_8m)")))
      << text.out;
  EXPECT_THAT(text.out, HasSubstr("* malloc arena pages (malloc*, heap*): credited to the call that made them usable"));
}

TEST_F(HeapRecordLiveTest, MapsSplitsEveryArenaRegion) {
  const Json maps = JsonOf("maps --json -i " + Trace() + Pid() + " --at " + AtPause());
  const Json heap = JsonOf("heap --json -i " + Trace() + Pid() + " --at " + AtPause());
  uint64_t free = 0, in_use = 0;
  for (const Json& r : maps) {
    if (r["kind"] != "malloc" && r["kind"] != "heap") {
      EXPECT_FALSE(r.contains("in_use_bytes")) << r.dump();
      continue;
    }
    free += r["free_bytes"].get<uint64_t>();
    in_use += r["in_use_bytes"].get<uint64_t>();
  }
  // Every free byte of the snapshot lies on an arena region; the in-use
  // bytes add the mmapped chunks and the arenas' own headers.
  EXPECT_EQ(free, heap["total"]["free_bytes"].get<uint64_t>());
  EXPECT_GE(in_use, heap["total"]["in_use_bytes"].get<uint64_t>() + heap["mmapped_chunks"]["bytes"].get<uint64_t>());
}

// query splits the page it is asked about and its region: each arena
// region's split is maps's, and the pages' free bytes add up to the
// snapshot's (every committed page of every arena region asked).
TEST_F(HeapRecordLiveTest, QuerySplitsThePageAndItsRegion) {
  const Json maps = JsonOf("maps --json -i " + Trace() + Pid() + " --at " + AtPause());
  // Every page of the smallest arena regions, up to kPages of them: each
  // answer carries its stacks, so all ~24 k pages would be ~300 MB of JSON.
  constexpr uint64_t kPages = 3000;
  std::vector<std::pair<uint64_t, Json>> arena;  // (pages, region)
  for (const Json& r : maps) {
    if ((r["kind"] != "malloc" && r["kind"] != "heap") || r["prot"] == "---") continue;
    const uint64_t start = std::stoull(r["start"].get<std::string>(), nullptr, 16);
    const uint64_t end = std::stoull(r["end"].get<std::string>(), nullptr, 16);
    arena.push_back({(end - start) / 4096, r});
  }
  std::stable_sort(arena.begin(), arena.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::ofstream list(dir_ + "/pages.txt");
  std::map<uint64_t, Json> regions;  // by start
  uint64_t pages = 0, region_free = 0;
  for (const auto& [n, r] : arena) {
    if (pages + n > kPages && !regions.empty()) break;
    const uint64_t start = std::stoull(r["start"].get<std::string>(), nullptr, 16);
    regions[start] = r;
    region_free += r["free_bytes"].get<uint64_t>();
    for (uint64_t page = start; page < start + n * 4096; page += 4096) list << absl::StrFormat("0x%x\n", page);
    pages += n;
  }
  list.close();
  ASSERT_GE(regions.size(), 2u);
  const Json answers = JsonOf("query --json -i " + Trace() + Pid() + " --at " + AtPause() + " --addresses " +
                              dir_ + "/pages.txt");
  ASSERT_EQ(answers.size(), pages);
  uint64_t page_free = 0, firsts = 0;
  for (const Json& a : answers) {
    ASSERT_TRUE(a["heap"].is_object()) << a.dump();
    const Json& h = a["heap"];
    EXPECT_LE(h["page_in_use_bytes"].get<uint64_t>() + h["page_free_bytes"].get<uint64_t>(), 4096u) << a.dump();
    page_free += h["page_free_bytes"].get<uint64_t>();
    const uint64_t addr = std::stoull(a["address"].get<std::string>(), nullptr, 16);
    if (auto it = regions.find(addr); it != regions.end()) {
      ++firsts;
      EXPECT_EQ(h["in_use_bytes"], it->second["in_use_bytes"]) << a.dump();
      EXPECT_EQ(h["free_bytes"], it->second["free_bytes"]) << a.dump();
    }
  }
  EXPECT_EQ(firsts, regions.size());
  // The pages' free bytes are their regions' (MapsSplitsEveryArenaRegion:
  // and the regions' are the snapshot's).
  EXPECT_EQ(page_free, region_free);
  EXPECT_GT(page_free, 0u) << "no free arena memory among the regions asked about";
  // Text: the arena line under the answer.
  CliRun one = Pageblame(
      absl::StrFormat("query -i %s%s --at %s 0x%x", Trace(), Pid(), AtPause(), regions.begin()->first));
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_THAT(one.out, HasSubstr("inside malloc's arena (heap snapshot at ")) << one.out;
}

// Each sample type's total in a .pb.gz (`--format pprof`), by its name.
std::map<std::string, int64_t> PprofTotals(const std::string& path) {
  const std::string gz = ReadText(path);
  perftools::profiles::Profile p;
  google::protobuf::io::ArrayInputStream raw(gz.data(), static_cast<int>(gz.size()));
  google::protobuf::io::GzipInputStream in(&raw, google::protobuf::io::GzipInputStream::GZIP);
  EXPECT_TRUE(p.ParseFromZeroCopyStream(&in)) << path;
  std::map<std::string, int64_t> out;
  for (const auto& sample : p.sample()) {
    for (int i = 0; i < sample.value_size() && i < p.sample_type_size(); ++i) {
      out[p.string_table(p.sample_type(i).type())] += sample.value(i);
    }
  }
  return out;
}

// pprof carries the split: attribute's in_use_space and free_space are its
// JSON's stacks summed, maps's free_space the snapshot's free bytes.
TEST_F(HeapRecordLiveTest, PprofCarriesInUseAndFree) {
  const std::string args = "attribute -i " + Trace() + Pid() + " --at " + AtPause() + " --regions " + dir_ + "/maps.txt";
  const Json j = JsonOf(args + " --json");
  int64_t in_use = 0, free = 0;
  for (const Json& s : j["stacks"]) {
    if (!s.contains("free_bytes") || s["free_bytes"].is_null()) continue;
    in_use += s["in_use_bytes"].get<int64_t>();
    free += s["free_bytes"].get<int64_t>();
  }
  ASSERT_GT(free, 0);
  ASSERT_EQ(Pageblame(args + " --format pprof -o " + dir_ + "/a.pb.gz").exit_code, 0);
  const std::map<std::string, int64_t> a = PprofTotals(dir_ + "/a.pb.gz");
  EXPECT_EQ(a.at("in_use_space"), in_use);
  EXPECT_EQ(a.at("free_space"), free);

  const Json heap = JsonOf("heap --json -i " + Trace() + Pid() + " --at " + AtPause());
  ASSERT_EQ(Pageblame("maps --format pprof -i " + Trace() + Pid() + " --at " + AtPause() + " -o " + dir_ + "/m.pb.gz")
                .exit_code,
            0);
  EXPECT_EQ(PprofTotals(dir_ + "/m.pb.gz").at("free_space"), heap["total"]["free_bytes"].get<int64_t>());

  // growth: in_use_to per stack as its JSON says (0 where unknown).
  const Json g = JsonOf("growth --json -i " + Trace() + Pid());
  int64_t to_in_use = 0;
  for (const Json& s : g["stacks"]) {
    if (s.contains("to_in_use_bytes") && !s["to_in_use_bytes"].is_null()) to_in_use += s["to_in_use_bytes"].get<int64_t>();
  }
  ASSERT_GT(to_in_use, 0);
  ASSERT_EQ(Pageblame("growth --format pprof -i " + Trace() + Pid() + " -o " + dir_ + "/g.pb.gz").exit_code, 0);
  EXPECT_EQ(PprofTotals(dir_ + "/g.pb.gz").at("in_use_to"), to_in_use);
}

TEST_F(HeapRecordLiveTest, GrowthSaysInUseGrowthWhereBothEndsAreKnown) {
  // From the trace's start (the exec: nothing mapped, so nothing in use)
  // to the end.
  const Json whole = JsonOf("growth --json -i " + Trace() + Pid());
  EXPECT_EQ(whole["total"]["from_bytes"], 0);
  EXPECT_EQ(whole["total"]["from_in_use_bytes"], 0);
  EXPECT_TRUE(whole["total"]["to_in_use_bytes"].is_number());
  const std::map<std::string, Json> m = Methods(whole);
  ASSERT_TRUE(m.count("churn_8m")) << whole["methods"].dump();
  EXPECT_EQ(m.at("churn_8m")["from_bytes"], 0);
  EXPECT_EQ(m.at("churn_8m")["from_in_use_bytes"], 0);
  EXPECT_EQ(m.at("churn_8m")["growth_in_use_bytes"], m.at("churn_8m")["to_in_use_bytes"]);
  EXPECT_TRUE(MostlyFree(m.at("churn_8m"), "to_")) << m.at("churn_8m").dump();
  EXPECT_FALSE(MostlyFree(m.at("keep_64k"), "to_"));
  // From the last heap snapshot at the pause to the end (after
  // malloc_trim): both ends known; trimming gives pages back, not chunks.
  const std::string from = " --from " + AtPause();
  const Json both = JsonOf("growth --json -i " + Trace() + Pid() + from);
  size_t known = 0;
  for (const Json& s : both["stacks"]) {
    if (!s.contains("growth_in_use_bytes")) continue;
    ASSERT_TRUE(s["growth_in_use_bytes"].is_number()) << s.dump();
    ++known;
    EXPECT_EQ(s["growth_in_use_bytes"].get<int64_t>(),
              s["to_in_use_bytes"].get<int64_t>() - s["from_in_use_bytes"].get<int64_t>());
  }
  EXPECT_GT(known, 0u);
  EXPECT_TRUE(both["total"]["growth_in_use_bytes"].is_number());
  CliRun text = Pageblame("growth -i " + Trace() + Pid() + from);
  EXPECT_THAT(text.out, HasSubstr("in use"));
}

}  // namespace
}  // namespace pageblame::testing

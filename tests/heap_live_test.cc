// The glibc heap walker against glibc itself (issue 39). traces/src/arena_mix.c
// builds a heap with every kind of free memory glibc keeps (4 arenas,
// kept blocks, 8 MiB blocks freed back into their arenas, fragmentation,
// tcache and fastbin leftovers, mmapped chunks), pauses, and writes glibc's
// own malloc_info and mallinfo2 at the pause; then calls malloc_trim(0)
// between two reads of its smaps_rollup. While it waits:
//   - per arena, `pageblame heap -p PID --json` gives malloc_info's `system
//     current` as system_bytes, and free - tcache + one flag bit per binned
//     chunk (__malloc_info sums chunksize_nomask(): PREV_INUSE is set on
//     every binned chunk, _int_free clears the others) as `fast + rest`;
//     the totals are mallinfo2's to the byte;
//   - the walk without debug information (built-in table, main_arena found
//     by its shape) gives the same numbers;
//   - a gcore core of the paused process gives the same numbers, with
//     resident bytes unknown (null);
//   - copies of that core with a bin made a cycle, a chunk size made
//     impossible, a fastbin pointer sent outside the heaps: the damaged
//     arena is named with what was wrong, the others are whole, promptly;
// and after malloc_trim(0) the anonymous resident bytes fell by exactly the
// releasable resident bytes the walk predicted (smaps_rollup's Anonymous;
// its Rss may also grow by the libc text pages the kernel maps around
// malloc_trim's code when it first runs, 64 KiB at a time).
// A process run with jemalloc (LD_PRELOAD of Debian's libjemalloc2) is
// named "jemalloc", with no arenas. Live: runs programs and gdb's gcore.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "processor/heap/glibc_layout.h"
#include "processor/regions/elf_core_reader.h"
#include "tests/cli_runner.h"
#include "tests/tool_runner.h"
#include "tests/glibc_truth.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

// arena_mix DIR, paused: started with a pipe on its standard input; each
// Next() releases it one step (a line).
class PausedMix {
 public:
  PausedMix(const std::string& name, const std::string& preload = "", const char* mode = nullptr)
      : dir_(ScratchPath(name)) {
    mkdir(dir_.c_str(), 0755);
    int fds[2];
    if (pipe(fds) != 0) return;
    const std::string program = std::string(PAGEBLAME_BINARY_DIR) + "/tests/arena_mix";
    child_ = fork();
    if (child_ == 0) {
      dup2(fds[0], 0);
      close(fds[1]);
      if (!preload.empty()) setenv("LD_PRELOAD", preload.c_str(), 1);
      execl(program.c_str(), program.c_str(), dir_.c_str(), "3", mode, nullptr);
      _exit(127);
    }
    close(fds[0]);
    in_ = fds[1];
    for (int i = 0; i < 600 && pid_ == 0; ++i) {
      std::istringstream(ReadText(dir_ + "/ready")) >> pid_;
      if (pid_ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~PausedMix() {
    if (in_ >= 0) close(in_);  // end of input releases every wait
    if (child_ > 0) {
      if (pid_ == 0) kill(child_, SIGKILL);
      waitpid(child_, nullptr, 0);
    }
  }
  void Next() {
    if (write(in_, "\n", 1) != 1) ADD_FAILURE() << "cannot release arena_mix";
  }
  int pid() const { return pid_; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  pid_t child_ = -1;
  int in_ = -1;
  int pid_ = 0;
};

Json HeapJson(const std::string& args) {
  CliRun r = Pageblame("heap --json " + args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Json j = Json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out;
  return j;
}

const char* const kFigures[] = {"system_bytes", "in_use_bytes", "free_bytes",  "tcache_bytes",
                                "fastbin_bytes", "top_bytes",   "free_chunks", "releasable_bytes"};

void SkipUnlessRoot() {
  if (geteuid() != 0) GTEST_SKIP() << "reading another process's memory needs root here";
}

TEST(HeapLiveTest, EveryArenaEqualsMallocInfoAndTotalsEqualMallinfo2) {
  SkipUnlessRoot();
  PausedMix mix("heap-info");
  ASSERT_NE(mix.pid(), 0) << "arena_mix never paused";
  const Json j = HeapJson(absl::StrCat("-p ", mix.pid()));
  const std::vector<MallocInfoHeap> info = ParseMallocInfo(ReadText(mix.dir() + "/info.xml"));
  ASSERT_EQ(j["arenas"].size(), info.size());
  ASSERT_EQ(info.size(), 4u) << "the main thread and three workers each have an arena";
  EXPECT_EQ(j["allocator"], "glibc");
  EXPECT_EQ(j["pid"], mix.pid());
  for (size_t i = 0; i < info.size(); ++i) {
    const Json& a = j["arenas"][i];
    SCOPED_TRACE(absl::StrCat("arena ", i, " ", a["address"].get<std::string>()));
    EXPECT_EQ(a["kind"], i == 0 ? "main" : "thread");
    EXPECT_TRUE(a["damage"].is_null()) << a["damage"];
    EXPECT_EQ(a["system_bytes"].get<uint64_t>(), info[i].system);
    EXPECT_EQ(a["fastbin_bytes"].get<uint64_t>(), info[i].fast);
    const uint64_t flags = a["binned_chunks"].get<uint64_t>();  // one PREV_INUSE bit each
    EXPECT_EQ(a["free_bytes"].get<uint64_t>() - a["tcache_bytes"].get<uint64_t>() + flags, info[i].fast + info[i].rest);
    EXPECT_EQ(a["in_use_bytes"].get<uint64_t>() + a["free_bytes"].get<uint64_t>(), info[i].system);
    // What arena_mix left: 7 chunks each of 32, 112 and 1008 bytes in its tcache, 13 of 32 and 112 in the fastbins.
    EXPECT_EQ(a["tcache_bytes"].get<uint64_t>(), 7u * (32 + 112 + 1008));
    EXPECT_EQ(a["fastbin_bytes"].get<uint64_t>(), 13u * (32 + 112));
    EXPECT_GT(a["free_resident_bytes"].get<uint64_t>(), 0u);
    EXPECT_LT(a["free_resident_bytes"].get<uint64_t>(), a["free_bytes"].get<uint64_t>()) << "half of each 8 MiB block was never written";
  }
  const std::map<std::string, uint64_t> m2 = ParseNumbers(ReadText(mix.dir() + "/mallinfo2.txt"));
  const Json& t = j["total"];
  EXPECT_EQ(t["system_bytes"].get<uint64_t>(), m2.at("arena"));
  EXPECT_EQ(t["free_bytes"].get<uint64_t>() - t["tcache_bytes"].get<uint64_t>(), m2.at("fordblks"));
  EXPECT_EQ(t["in_use_bytes"].get<uint64_t>() + t["tcache_bytes"].get<uint64_t>(), m2.at("uordblks"));
  EXPECT_EQ(t["fastbin_bytes"].get<uint64_t>(), m2.at("fsmblks"));
  EXPECT_EQ(j["arenas"][0]["top_bytes"].get<uint64_t>(), m2.at("keepcost"));
  EXPECT_EQ(j["mmapped_chunks"]["count"].get<uint64_t>(), m2.at("hblks"));
  EXPECT_EQ(j["mmapped_chunks"]["bytes"].get<uint64_t>(), m2.at("hblkhd"));
  EXPECT_EQ(j["mmapped_chunks"]["count"].get<uint64_t>(), 2u) << "two 40 MiB blocks";
  EXPECT_EQ(j["glibc"]["layout"], "dwarf") << "libc6-dbg is installed by scripts/setup";

  // Without debug information: the built-in table and main_arena found by its shape.
  const Json plain = HeapJson(absl::StrCat("--no-debug-info -p ", mix.pid()));
  EXPECT_EQ(plain["glibc"]["layout"], "table");
  ASSERT_EQ(plain["arenas"].size(), j["arenas"].size());
  for (size_t i = 0; i < info.size(); ++i) {
    for (const char* f : kFigures) EXPECT_EQ(plain["arenas"][i][f], j["arenas"][i][f]) << f;
  }
}

TEST(HeapLiveTest, MallocTrimGivesBackTheReleasableResidentBytes) {
  SkipUnlessRoot();
  PausedMix mix("heap-trim");
  ASSERT_NE(mix.pid(), 0) << "arena_mix never paused";
  const Json j = HeapJson(absl::StrCat("-p ", mix.pid()));
  mix.Next();
  std::string trim;
  for (int i = 0; i < 500 && trim.empty(); ++i) {
    trim = ReadText(mix.dir() + "/trim.txt");
    if (trim.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  uint64_t rss_before = 0, rss_after = 0, anon_before = 0, anon_after = 0;
  int ret = 0;
  std::istringstream(trim) >> rss_before >> rss_after >> anon_before >> anon_after >> ret;
  ASSERT_GT(anon_before, 0u) << trim;
  EXPECT_EQ(ret, 1) << "malloc_trim released memory";
  const uint64_t predicted = j["total"]["releasable_resident_bytes"].get<uint64_t>();
  EXPECT_GT(predicted, uint64_t{8} << 20);
  EXPECT_EQ(anon_before - anon_after, predicted);
  EXPECT_LE(j["total"]["releasable_resident_bytes"].get<uint64_t>(), j["total"]["releasable_bytes"].get<uint64_t>());
  // Thread arenas keep their top: malloc_trim does not shrink it.
  for (const Json& a : j["arenas"]) {
    EXPECT_LT(a["releasable_bytes"].get<uint64_t>(), a["free_bytes"].get<uint64_t>() - (a["kind"] == "main" ? 0 : a["top_bytes"].get<uint64_t>()) + 1);
  }
}

// The core's bytes at vaddr `at`, by its PT_LOAD headers.
class CoreFile {
 public:
  explicit CoreFile(const std::string& path) : path_(path) {
    const int fd = open(path.c_str(), O_RDONLY);
    struct stat st;
    fstat(fd, &st);
    auto core = regions::ElfCoreReader::OpenFile(fd, st.st_size, path);
    if (core.ok()) loads_ = (*core)->loads();
    close(fd);
  }
  // The program header number (1-based) of the PT_LOAD holding `at`, or 0.
  int SegmentOf(uint64_t at) const {
    for (const regions::LoadSegment& s : loads_) {
      if (at >= s.vaddr && at < s.vaddr + s.memsz) return s.index;
    }
    return 0;
  }
  // The file offset of vaddr `at`, or -1.
  long Offset(uint64_t at) const {
    for (const regions::LoadSegment& s : loads_) {
      if (at >= s.vaddr && at < s.vaddr + s.filesz) return static_cast<long>(s.offset + (at - s.vaddr));
    }
    return -1;
  }
  uint64_t Word(uint64_t at) const {
    uint64_t v = 0;
    const int fd = open(path_.c_str(), O_RDONLY);
    if (pread(fd, &v, 8, Offset(at)) != 8) ADD_FAILURE() << "cannot read " << at;
    close(fd);
    return v;
  }
  // Writes `v` at vaddr `at`; returns what was there.
  uint64_t Patch(uint64_t at, uint64_t v) const {
    const uint64_t old = Word(at);
    const int fd = open(path_.c_str(), O_WRONLY);
    if (pwrite(fd, &v, 8, Offset(at)) != 8) ADD_FAILURE() << "cannot patch " << at;
    close(fd);
    return old;
  }

 private:
  std::string path_;
  std::vector<regions::LoadSegment> loads_;
};

uint64_t Address(const Json& a) { return std::stoull(a["address"].get<std::string>(), nullptr, 16); }

TEST(HeapLiveTest, CoreGivesTheSameNumbersAndDamageIsNamed) {
  SkipUnlessRoot();
  PB_REQUIRE_TOOL("/usr/bin/gcore");
  PausedMix mix("heap-core");
  ASSERT_NE(mix.pid(), 0) << "arena_mix never paused";
  const Json live = HeapJson(absl::StrCat("-p ", mix.pid()));
  const std::string prefix = mix.dir() + "/core";
  const std::string core = absl::StrCat(prefix, ".", mix.pid());
  ASSERT_EQ(Shell(absl::StrCat("gcore -o ", prefix, " ", mix.pid(), " >/dev/null")).exit_code, 0);
  const Json j = HeapJson(core);
  EXPECT_EQ(j["pid"], mix.pid());
  EXPECT_TRUE(j["snapshot_time"].is_null());
  ASSERT_EQ(j["arenas"].size(), live["arenas"].size());
  for (size_t i = 0; i < live["arenas"].size(); ++i) {
    EXPECT_EQ(j["arenas"][i]["address"], live["arenas"][i]["address"]);
    for (const char* f : kFigures) EXPECT_EQ(j["arenas"][i][f], live["arenas"][i][f]) << f;
    EXPECT_TRUE(j["arenas"][i]["free_resident_bytes"].is_null());
    EXPECT_TRUE(j["arenas"][i]["releasable_resident_bytes"].is_null());
  }
  EXPECT_EQ(j["mmapped_chunks"], live["mmapped_chunks"]);

  // Damage, in place on the core (each patch undone after its check).
  const std::optional<heap::GlibcLayout> l = heap::BuiltinLayout(2, 36);
  const CoreFile file(core);
  const Json& thread = j["arenas"][1];
  const uint64_t arena = Address(thread);
  auto damaged = [&](const std::string& what, const std::string& words) {
    SCOPED_TRACE(what);
    const auto start = std::chrono::steady_clock::now();
    CliRun r = Pageblame("heap --json " + core);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, 10.0);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Json d = Json::parse(r.out);
    ASSERT_EQ(d["arenas"].size(), j["arenas"].size());
    EXPECT_THAT(d["arenas"][1]["damage"].dump(), HasSubstr(words));
    for (size_t i : {size_t{0}, size_t{2}, size_t{3}}) EXPECT_TRUE(d["arenas"][i]["damage"].is_null()) << i;
    EXPECT_THAT(Pageblame("heap " + core).out, HasSubstr(absl::StrFormat("arena 0x%x is damaged", arena)));
  };
  // A bin whose first chunk's fd points back at itself.
  uint64_t bin_chunk = 0;
  for (uint32_t i = 2; i < 128 && bin_chunk == 0; ++i) {
    const uint64_t fd_at = arena + l->state_bins + (i - 1) * 16;
    if (file.Word(fd_at) != fd_at - 16) bin_chunk = file.Word(fd_at);
  }
  ASSERT_NE(bin_chunk, 0u) << "arena_mix leaves chunks in the bins";
  uint64_t old = file.Patch(bin_chunk + 16, bin_chunk);
  damaged("cycle", "a cycle");
  file.Patch(bin_chunk + 16, old);
  // The first chunk of the arena's heap: a size that is not a multiple of 16.
  const uint64_t first = (arena + l->state_size + 15) & ~uint64_t{15};
  old = file.Patch(first + 8, 0x1238);  // flags are the low 3 bits: 0x1238 is no multiple of 16
  damaged("size", "impossible size 0x1238");
  file.Patch(first + 8, old);
  // A fastbin head outside every heap.
  uint64_t fastbin = 0;
  for (uint32_t i = 0; i < l->nfastbins && fastbin == 0; ++i)
    if (file.Word(arena + l->state_fastbins + i * 8) != 0) fastbin = arena + l->state_fastbins + i * 8;
  ASSERT_NE(fastbin, 0u);
  old = file.Patch(fastbin, 0x10000);
  damaged("pointer", "outside the arena's heaps");
  file.Patch(fastbin, old);
  // Whole again.
  EXPECT_EQ(HeapJson(core)["arenas"], j["arenas"]);
  // A segment the core does not hold (p_filesz 0, as the kernel writes a
  // mapping it leaves out): the arena whose heap it was says so.
  const int fd = open(core.c_str(), O_RDWR);
  uint64_t e_phoff = 0;
  ASSERT_EQ(pread(fd, &e_phoff, 8, 32), 8);
  const int index = file.SegmentOf(arena);
  ASSERT_GT(index, 0);
  const uint64_t zero = 0;
  ASSERT_EQ(pwrite(fd, &zero, 8, static_cast<off_t>(e_phoff + (index - 1) * 56 + 32)), 8);  // p_filesz
  close(fd);
  // Its malloc_state lies there too, so its `next` is gone: the list ends
  // there, and the answer says so.
  const Json cut = HeapJson(core);
  ASSERT_EQ(cut["arenas"].size(), 2u);
  EXPECT_TRUE(cut["arenas"][0]["damage"].is_null());
  EXPECT_EQ(cut["arenas"][0]["free_bytes"], j["arenas"][0]["free_bytes"]);
  EXPECT_THAT(cut["arenas"][1]["damage"].dump(), HasSubstr("cannot read its malloc_state"));
  EXPECT_THAT(cut["note"].dump(), HasSubstr("not walked"));
}

// One arena changes all the time while the walker reads: the quiet arenas
// are still exactly malloc_info's, the busy one is either consistent,
// retried into consistency, or marked torn or damaged — never a crash or a
// hang.
TEST(HeapLiveTest, ABusyArenaDoesNotDisturbTheQuietOnes) {
  SkipUnlessRoot();
  PausedMix mix("heap-busy", "", "busy");
  ASSERT_NE(mix.pid(), 0) << "arena_mix never paused";
  const std::vector<MallocInfoHeap> info = ParseMallocInfo(ReadText(mix.dir() + "/info.xml"));
  ASSERT_EQ(info.size(), 4u);
  int retried = 0;
  for (int round = 0; round < 5; ++round) {
    const auto start = std::chrono::steady_clock::now();
    const Json j = HeapJson(absl::StrCat("-p ", mix.pid()));
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10.0);
    ASSERT_EQ(j["arenas"].size(), 5u) << "the busy thread has an arena of its own";
    // glibc puts a new arena right after main_arena (_int_new_arena): the
    // busy one is second, the quiet ones follow in malloc_info's order.
    for (size_t i = 0; i < info.size(); ++i) {
      const Json& a = j["arenas"][i == 0 ? 0 : i + 1];
      EXPECT_TRUE(a["damage"].is_null()) << a["damage"];
      EXPECT_FALSE(a["torn"].get<bool>());
      EXPECT_EQ(a["system_bytes"].get<uint64_t>(), info[i].system);
      EXPECT_EQ(a["fastbin_bytes"].get<uint64_t>(), info[i].fast);
    }
    retried += j["attempts"].get<int>() > 1;
    const Json& busy = j["arenas"][1];
    if (!busy["damage"].is_null()) {
      EXPECT_TRUE(busy["torn"].get<bool>()) << busy["damage"];
    }
  }
  std::printf("heap-busy: %d of 5 walks were read again\n", retried);
}

TEST(HeapLiveTest, JemallocIsNamedNotWalked) {
  SkipUnlessRoot();
  const std::string jemalloc = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2";
  if (access(jemalloc.c_str(), R_OK) != 0) {
    if (ToolsRequired()) FAIL() << jemalloc << " is not installed";
    GTEST_SKIP() << jemalloc << " is not installed (scripts/setup installs libjemalloc2)";
  }
  PausedMix mix("heap-jemalloc", jemalloc);
  ASSERT_NE(mix.pid(), 0) << "arena_mix never paused";
  const Json j = HeapJson(absl::StrCat("-p ", mix.pid()));
  EXPECT_EQ(j["allocator"], "jemalloc");
  EXPECT_TRUE(j["arenas"].empty());
  EXPECT_THAT(j["note"].get<std::string>(), HasSubstr("libjemalloc.so.2"));
  EXPECT_THAT(Pageblame(absl::StrCat("heap -p ", mix.pid())).out, HasSubstr("malloc is jemalloc's"));
}

}  // namespace
}  // namespace pageblame::testing

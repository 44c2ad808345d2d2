// Resident bytes per C# method on a real .NET 10 process (issue 28), live:
// `traces/record-dotnet.sh --rss` records traces/src/dotnet-leak under
// `pageblame record --rss-every 0.5` and asks for a snapshot (SIGUSR1) when the
// app says READY; the app fills every byte of its native leaks and writes
// which C# method got which addresses (its truth file). Then:
//   - TRACE.rss loads against the trace; it holds the requested snapshot and,
//     last, the exit one (the leaks are alive until the app exits);
//   - every filled page of the truth is resident in both;
//   - `attribute --regions` of the truth, per C# method (the innermost
//     Program:: frame of the stack credited, commit else origin): the
//     resident bytes equal the truth's filled bytes, page-rounded at the exit
//     snapshot and byte-exact at the requested one (--at), and no page of the
//     managed heap is credited to a native leak's method;
//   - neither answer warns (the snapshot file is the trace's);
//   - a dotnet-dump collect taken while recorded (after the requested
//     snapshot) is written: record lets the app go for it, then traces it
//     again;
//   - `attribute --unaccounted` at the requested snapshot, from the runtime
//     table record saved then (no dump): every native leak's pages, none of
//     the managed heap's;
//   - inside glibc's arenas (issue 39), from the heap snapshot record took
//     with the requested one: the app's burst of 8 MiB blocks, each freed,
//     reads "freed; held by glibc" under its C# method, and the method that
//     keeps 1 MiB blocks in use, by the bytes the app kept (its NAME.heap.tsv
//     and its own malloc_info: ExpectArenaSplitPerCSharpMethod below).
// Skipped (GTEST_SKIP) when the recording script skips: not root, no perf
// tracepoints, no dotnet (its exit 77 and message).
#include <dirent.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/recorder/debugger_watch.h"
#include "processor/residency/residency_index.h"
#include "tests/cli_runner.h"
#include "tests/dotnet_truth.h"
#include "tests/glibc_truth.h"
#include "tests/residency_fixtures.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

using Json = nlohmann::json;
using residency::ResidencySnapshot;
using residency::SnapshotReason;
using ::testing::HasSubstr;
using ::testing::Not;
constexpr uint64_t kPage = 4096;

uint64_t PageFloor(uint64_t a) { return a & ~(kPage - 1); }
uint64_t PageCeil(uint64_t a) { return (a + kPage - 1) & ~(kPage - 1); }

// The one file in `dir` named PREFIX*SUFFIX, or "".
std::string FindFile(const std::string& dir, const std::string& prefix, const std::string& suffix) {
  std::string found;
  DIR* d = opendir(dir.c_str());
  if (!d) return "";
  while (dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (absl::StartsWith(n, prefix) && absl::EndsWith(n, suffix)) found = dir + "/" + n;
  }
  closedir(d);
  return found;
}

// The C# method that made a call: its innermost frame naming a Program::
// method ("void [dotnet-leak] Program::LeakNativeMemory(int32,int32)[QuickJitted]"
// -> "LeakNativeMemory"), or "" (runtime-only stacks: startup, GC threads).
// For LeakNativeMmap the first app frame is the C function leak_native_mmap;
// the C# method is the next one.
std::string CSharpMethod(const Json& call) {
  if (!call.is_object() || !call.contains("stack")) return "";
  for (const Json& f : call["stack"]) {
    if (!f["symbol"].is_string()) continue;
    const std::string s = f["symbol"].get<std::string>();
    const size_t at = s.find("Program::");
    if (at == std::string::npos) continue;
    const size_t from = at + std::string("Program::").size();
    return s.substr(from, s.find('(', from) - from);
  }
  return "";
}

// attribute --by commit (its default) credits the committing call, else the creating one.
const Json& Credited(const Json& entry) { return entry["commit"].is_null() ? entry["origin"] : entry["commit"]; }

bool Holds(const PageSet& pages, uint64_t addr) {
  auto it = pages.ranges().upper_bound(addr);
  return it != pages.ranges().begin() && addr < std::prev(it)->second;
}

uint64_t RssOr0(const Json& j) { return j.is_null() ? 0 : j.get<uint64_t>(); }

// `pageblame attribute --json` of `regions` (a range list), checked to have
// run without a warning; the parsed answer.
Json Attribute(const std::string& dir, const std::string& trace, const std::string& pid,
               const std::string& regions, const std::string& extra) {
  CliRun run = Pageblame("attribute --json -i " + trace + " --pid " + pid + " --regions " + regions +
                         " --perf-map-dir " + dir + extra);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  // TRACE.rss is this trace's: no "not this trace's snapshots" warning, nor any other.
  EXPECT_THAT(run.err, Not(HasSubstr("warning"))) << run.err;
  return run.exit_code == 0 ? Json::parse(run.out) : Json::object();
}

// Resident bytes per C# method, over the answer's stacks.
std::map<std::string, uint64_t> RssByMethod(const Json& answer) {
  std::map<std::string, uint64_t> out;
  for (const Json& s : answer["stacks"]) out[CSharpMethod(Credited(s))] += RssOr0(s["rss"]);
  return out;
}

// A range list (`0xSTART-0xEND`) of `pages` (rows sharing no byte: no
// "rows share bytes" note).
std::string WriteRanges(const PageSet& pages, const std::string& path) {
  std::ofstream f(path);
  for (const auto& [start, end] : pages.ranges()) f << absl::StrFormat("0x%x-0x%x\n", start, end);
  return path;
}

// `--at` for a snapshot: its time rounded up to perf's microseconds, so the
// snapshot is at or before it.
std::string AtArg(const ResidencySnapshot& s) {
  const uint64_t us = (s.time + 999) / 1000;
  return absl::StrFormat(" --at %d.%06d", us / 1000000, us % 1000000);
}

// glibc's sizes (x86-64): a chunk is its request + 8 bytes rounded up to 16,
// and starts 16 bytes before the pointer malloc returns; a thread arena's
// heap is aligned to HEAP_MAX_SIZE (64 MiB), its malloc_state inside it.
constexpr uint64_t kChunkHeader = 16, kHeapMax = uint64_t{64} << 20;
// A thread arena's first heap as glibc makes it (new_heap: the request,
// headers and M_TOP_PAD's 128 KiB, in pages), and that pad.
constexpr uint64_t kFirstHeap = 132 << 10, kTopPad = 128 << 10;
uint64_t ChunkSize(uint64_t request) { return (request + 8 + 15) & ~uint64_t{15}; }

// Per C# method, the bytes of its stacks in glibc's arenas (kind malloc or
// heap): committed, in use and free held by glibc.
struct ArenaBytes {
  uint64_t committed = 0, in_use = 0, free = 0;
};
std::map<std::string, ArenaBytes> ArenaBytesByMethod(const Json& answer) {
  std::map<std::string, ArenaBytes> out;
  for (const Json& s : answer["stacks"]) {
    if (s["kind"] != "malloc" && s["kind"] != "heap") continue;
    EXPECT_TRUE(s["in_use_bytes"].is_number() && s["free_bytes"].is_number()) << s.dump();
    if (!s["in_use_bytes"].is_number() || !s["free_bytes"].is_number()) continue;
    ArenaBytes& b = out[CSharpMethod(Credited(s))];
    b.committed += s["committed_bytes"].get<uint64_t>();
    b.in_use += s["in_use_bytes"].get<uint64_t>();
    b.free += s["free_bytes"].get<uint64_t>();
  }
  return out;
}

// The arena of `heap --json` whose heap holds `addr` (a thread arena's
// malloc_state lies in its first heap), or null.
const Json* ArenaHolding(const Json& heap, uint64_t addr) {
  for (const Json& a : heap["arenas"]) {
    const uint64_t base = std::stoull(a["address"].get<std::string>(), nullptr, 16) & ~(kHeapMax - 1);
    if (a["kind"] == "thread" && base <= addr && addr < base + a["system_bytes"].get<uint64_t>()) return &a;
  }
  return nullptr;
}

// Inside glibc's arenas, at the requested snapshot (`at`), against what the
// app says (its NAME.PID.heap.tsv and NAME.PID.malloc_info.xml, written just
// before READY; dotnet-leak runs BurstNativeMemory and KeepNativeMemory on
// threads of their own, which wait until the release, so their arenas hold
// still; traces/src/dotnet-leak/Program.cs):
//   - BurstNativeMemory's first 8 MiB block was mmapped; freeing it raised
//     glibc's mmap threshold and the 7 later ones came from one address in
//     its thread's arena, which keeps the memory: `heap` finds that arena
//     with the block's bytes free in its top, and `attribute` credits the
//     arena pages its malloc grew to the C# method, every byte of them free
//     (the block's header and the chunks below it lie on the pages the arena
//     was made with), and says "freed; held by glibc" on the first screen;
//   - KeepNativeMemory's 16 blocks of 1 MiB are in use in their arena; the
//     method's arena pages hold the kept chunks from the first page it made,
//     all in use (to the byte; at most 64 KiB more: what the thread malloc'd
//     after them), then top, free: in use = kept bytes, within the arena's
//     first 132 KiB (glibc's first heap of a thread arena, made by the
//     runtime's thread start, which holds the first block's start) below and
//     16 header bytes a block (+ those 64 KiB) above;
//   - those two arenas are what the app's own malloc_info says, to the byte
//     (the runtime's busy arenas may change between its malloc_info and the
//     snapshot: not compared);
//   - `query` of a page inside a kept block: in use; inside the freed block: free.
void ExpectArenaSplitPerCSharpMethod(const std::string& dir, const std::string& trace, const std::string& pid,
                                     const ResidencySnapshot& requested) {
  SCOPED_TRACE("inside glibc's arenas");
  const std::string at = AtArg(requested);
  const std::vector<TruthRange> rows = ReadDotnetTruth(FindFile(dir, "dotnet-leak." + pid, ".heap.tsv"));
  std::vector<TruthRange> burst, kept;
  for (const TruthRange& t : rows) (t.method == "BurstNativeMemory" ? burst : kept).push_back(t);
  ASSERT_EQ(burst.size(), 8u);
  ASSERT_EQ(kept.size(), 16u);
  for (const TruthRange& k : kept) ASSERT_EQ(k.method, "KeepNativeMemory");
  const uint64_t burst_size = burst[0].end - burst[0].start, kept_size = kept[0].end - kept[0].start;
  for (size_t i = 2; i < burst.size(); ++i) EXPECT_EQ(burst[i].start, burst[1].start) << "request " << i;

  CliRun heap_run = Pageblame("heap --json -i " + trace + " --pid " + pid + at);
  ASSERT_EQ(heap_run.exit_code, 0) << heap_run.err;
  const Json heap = Json::parse(heap_run.out);
  EXPECT_EQ(heap["allocator"], "glibc");
  // The walk of the requested snapshot's moment (stamped when it began,
  // just after the residency snapshot), not the one before it.
  EXPECT_GE(heap["snapshot_time"].get<double>(), requested.time / 1e9 - 1e-6);
  const Json* burst_arena = ArenaHolding(heap, burst[1].start);
  const Json* kept_arena = ArenaHolding(heap, kept[0].start);
  ASSERT_NE(burst_arena, nullptr) << "the later 8 MiB blocks are in no thread arena";
  ASSERT_NE(kept_arena, nullptr) << "the kept blocks are in no thread arena";
  EXPECT_EQ(ArenaHolding(heap, burst[0].start), nullptr) << "the first 8 MiB block (mmapped) is in an arena";
  EXPECT_NE(burst_arena, kept_arena);
  for (const TruthRange& k : kept) EXPECT_EQ(ArenaHolding(heap, k.start), kept_arena);
  const Json& b = *burst_arena;
  const Json& k = *kept_arena;
  EXPECT_TRUE(b["damage"].is_null() && !b["torn"].get<bool>()) << b.dump();
  EXPECT_TRUE(k["damage"].is_null() && !k["torn"].get<bool>()) << k.dump();
  // The freed block went back to top; what the thread malloc'd after it
  // (a few KiB seen) came from top's start, on the arena's first pages.
  EXPECT_GE(b["top_bytes"].get<uint64_t>(), burst_size - kFirstHeap) << "the freed block is not top";
  EXPECT_GE(k["in_use_bytes"].get<uint64_t>(), kept.size() * ChunkSize(kept_size));

  // The app's malloc_info: glibc links each new arena right after
  // main_arena, so arenas made after it (by the runtime's threads) come
  // first in the snapshot's list, and its heaps are the list's last ones.
  const std::vector<MallocInfoHeap> info =
      ParseMallocInfo(ReadText(FindFile(dir, "dotnet-leak." + pid, ".malloc_info.xml")));
  const Json& arenas = heap["arenas"];
  ASSERT_GE(info.size(), 3u);
  ASSERT_GE(arenas.size(), info.size());
  int compared = 0;
  for (size_t i = 1; i < info.size(); ++i) {
    const Json& a = arenas[arenas.size() - info.size() + i];
    if (a["address"] != b["address"] && a["address"] != k["address"]) continue;
    ++compared;
    SCOPED_TRACE(absl::StrCat("arena ", a["address"].get<std::string>(), ", malloc_info heap ", i));
    EXPECT_EQ(a["system_bytes"].get<uint64_t>(), info[i].system);
    EXPECT_EQ(a["fastbin_bytes"].get<uint64_t>(), info[i].fast);
    // malloc_info's "rest" carries one PREV_INUSE bit per binned chunk (docs/heap.md).
    EXPECT_EQ(a["free_bytes"].get<uint64_t>() - a["tcache_bytes"].get<uint64_t>() + a["binned_chunks"].get<uint64_t>(),
              info[i].fast + info[i].rest);
  }
  EXPECT_EQ(compared, 2) << "the burst's and the keeping thread's arenas are not where malloc_info has them";

  // Per C# method, from attribute over the process's maps at READY.
  const std::string args = "attribute -i " + trace + " --pid " + pid + at + " --regions " +
                           FindFile(dir, "dotnet-leak." + pid, ".maps") + " --perf-map-dir " + dir;
  CliRun json_run = Pageblame(args + " --json");
  ASSERT_EQ(json_run.exit_code, 0) << json_run.err;
  const Json answer = Json::parse(json_run.out);
  EXPECT_NEAR(answer["heap_snapshot_time"].get<double>(), heap["snapshot_time"].get<double>(), 1e-6);
  std::map<std::string, ArenaBytes> by_method = ArenaBytesByMethod(answer);
  const ArenaBytes burst_bytes = by_method["BurstNativeMemory"], kept_bytes = by_method["KeepNativeMemory"];
  const uint64_t burst_end = (std::stoull(b["address"].get<std::string>(), nullptr, 16) & ~(kHeapMax - 1)) +
                             b["system_bytes"].get<uint64_t>();
  const uint64_t kept_end = (std::stoull(k["address"].get<std::string>(), nullptr, 16) & ~(kHeapMax - 1)) +
                            k["system_bytes"].get<uint64_t>();
  // The burst: its pages run from above the block's first page to the
  // arena's end, all of it top.
  EXPECT_EQ(burst_bytes.in_use, 0u);
  EXPECT_EQ(burst_bytes.free, burst_bytes.committed);
  EXPECT_GE(burst_bytes.committed, burst_size - kFirstHeap);
  EXPECT_LE(burst_bytes.committed, burst_end - PageCeil(burst[1].start));
  // The keeping method: from the first page it made (the arena's end minus
  // what it committed) to the kept chunks' end, the kept chunks, in use;
  // then top, free, but for what the thread malloc'd after them (it came
  // from top's start: none seen, the burst's thread a few KiB; allowed
  // 64 KiB). So in use is the kept bytes, within the arena's first heap
  // (where the first block starts) below and 16 header bytes a block above.
  const uint64_t kept_chunks_end = kept.back().start - kChunkHeader + ChunkSize(kept_size);
  const uint64_t first_page = kept_end - kept_bytes.committed;
  EXPECT_EQ(kept_bytes.in_use + kept_bytes.free, kept_bytes.committed);
  EXPECT_GE(kept_bytes.in_use, kept_chunks_end - first_page);
  EXPECT_LE(kept_bytes.in_use, kept_chunks_end - first_page + (64 << 10));
  EXPECT_LE(kept_bytes.free, kept_end - kept_chunks_end);
  EXPECT_LE(kept_end - kept_chunks_end, kTopPad + kPage);
  const uint64_t kept_total = kept.size() * kept_size;
  EXPECT_GE(kept_bytes.in_use, kept_total - kFirstHeap);
  EXPECT_LE(kept_bytes.in_use, kept.size() * ChunkSize(kept_size) + (64 << 10));
  std::cout << absl::StrFormat(
      "BurstNativeMemory: %d bytes of arena pages, %d in use, %d free held by glibc\n"
      "KeepNativeMemory: kept %d bytes; %d bytes of arena pages, %d in use, %d free\n",
      burst_bytes.committed, burst_bytes.in_use, burst_bytes.free, kept_total, kept_bytes.committed, kept_bytes.in_use,
      kept_bytes.free);

  // The first screen says it.
  CliRun text = Pageblame(args);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(std::regex_search(
      text.out, std::regex(R"(freed; held by glibc +\d+ +\d+ +\d+ +malloc\* +Program::BurstNativeMemory -> )")))
      << text.out;
  EXPECT_TRUE(std::regex_search(
      text.out, std::regex(R"([0-9.]+ [KMG]iB +\d+ +\d+ +\d+ +malloc\* +Program::KeepNativeMemory -> )")))
      << text.out;
  EXPECT_THAT(text.out, HasSubstr("* malloc arena pages (malloc*, heap*): credited to the call that made them usable"));

  // query: a page inside a kept block, one inside the freed block.
  const std::string pages = dir + "/arena-pages.txt";
  std::ofstream(pages) << absl::StrFormat("0x%x\n0x%x\n", PageCeil(kept[8].start),
                                          PageCeil(burst[1].start + burst_size / 2));
  CliRun q = Pageblame("query --json -i " + trace + " --pid " + pid + at + " --addresses " + pages);
  ASSERT_EQ(q.exit_code, 0) << q.err;
  const Json qa = Json::parse(q.out);
  ASSERT_EQ(qa.size(), 2u);
  EXPECT_EQ(qa[0]["heap"]["page_in_use_bytes"], kPage) << qa[0].dump();
  EXPECT_EQ(qa[1]["heap"]["page_free_bytes"], kPage) << qa[1].dump();
}

TEST(DotnetResidencyLiveTest, ResidentBytesPerCSharpMethodEqualTheTruth) {
  if (geteuid() != 0) GTEST_SKIP() << "recording syscall tracepoints needs root";
  const std::string dir = ScratchPath("dotnet-rss");
  CliRun rec = Shell("PAGEBLAME=" + std::string(PAGEBLAME_BINARY_DIR) + "/bin/pageblame timeout 600 " +
                     SourceDir() + "/traces/record-dotnet.sh --rss " + dir);
  if (rec.exit_code == 77) GTEST_SKIP() << rec.err;
  ASSERT_EQ(rec.exit_code, 0) << rec.out << rec.err;

  const std::string trace = dir + "/dotnet-leak.data";
  const std::string truth_file = FindFile(dir, "dotnet-leak.", ".truth.tsv");
  ASSERT_FALSE(truth_file.empty()) << rec.err;
  const std::string name = truth_file.substr(dir.size() + 1);
  const std::string pid_text = name.substr(12, name.size() - 12 - 10);  // dotnet-leak.PID.truth.tsv
  uint32_t pid = 0;
  ASSERT_TRUE(absl::SimpleAtoi(pid_text, &pid)) << name;
  const std::vector<TruthRange> truth = ReadDotnetTruth(truth_file);
  ASSERT_GE(truth.size(), 17u);
  const std::string log = ReadText(dir + "/dotnet-leak.log");
  EXPECT_THAT(log, HasSubstr("requested snapshot of 1 process written to " + trace + ".rss")) << log;
  EXPECT_THAT(log, HasSubstr(absl::StrCat("pid ", pid, " (dotnet) "))) << log;
  // The README's walkthrough: dotnet-dump collect while record traces the
  // app for its exit snapshot. record lets the app go for the dump (its
  // createdump attaches to every thread) and takes it back after.
  // Without the kernel's process events (another network namespace) it
  // cannot know, and the dump fails as it did before.
  if (recorder::DebuggerWatch::Works()) {
    EXPECT_THAT(log, ::testing::ContainsRegex("core dump while recorded: [0-9]+ bytes")) << log;
    EXPECT_THAT(log, HasSubstr(absl::StrCat("is about to trace pid ", pid, ": let go meanwhile"))) << log;
    EXPECT_THAT(log, HasSubstr(absl::StrCat("pid ", pid, " traced again for its exit snapshot"))) << log;
  } else {
    std::cout << "no process events here: the dump while recorded is not checked\n";
  }

  // TRACE.rss against the trace: the requested snapshot, then the exit one, last.
  session::SessionOptions o;
  o.path = trace;
  o.preload_symbols = false;
  auto loaded = session::Session::Open(o);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  absl::StatusOr<residency::ResidencyIndex> rss = residency::ResidencyIndex::Load(trace + ".rss", (*loaded)->Facts());
  ASSERT_TRUE(rss.ok()) << rss.status();
  const std::vector<ResidencySnapshot>& snaps = rss->Of(pid);
  ASSERT_FALSE(snaps.empty());
  const ResidencySnapshot* requested = nullptr;
  for (const ResidencySnapshot& s : snaps) {
    if (s.reason == SnapshotReason::kRequested) requested = &s;
  }
  ASSERT_NE(requested, nullptr);
  ExpectArenaSplitPerCSharpMethod(dir, trace, pid_text, *requested);
  // The last, which answers "at the end", is the exit one: no periodic
  // snapshot read during the exit's teardown follows it (seen live before
  // SnapshotTaker dropped them: one of 135.6 MiB of 214.5, begun 13 ms later).
  // The exit snapshot needs the command's exit stop, which the kernel skips
  // for a thread that dies of a fatal signal: when .NET ends the process by
  // exit_group from another thread than the one traced (seen once under CI
  // load), there is none, `record` says "at its last snapshot", and the
  // checks "at the end" are made at the requested snapshot instead (the
  // last periodic one may have been read during the teardown).
  const bool has_exit = snaps.back().reason == SnapshotReason::kExit;
  if (has_exit) {
    EXPECT_THAT(log, HasSubstr(" at its exit")) << log;
  } else {
    std::cout << "no exit snapshot (the traced thread did not stop at exit): end checks at the requested one\n";
  }
  const ResidencySnapshot& exit = has_exit ? snaps.back() : *requested;

  // Per method: the truth's filled bytes, and the same widened to pages.
  // NativeMemory.Alloc and AllocHGlobal of 3-4 MiB are glibc mmap'd chunks of
  // the size + 16 bytes rounded up to a page: the block starts 16 bytes into
  // the chunk's first page (glibc's prev_size/size header, which glibc
  // writes) and its fill spills 16 bytes into the chunk's last page. Widened
  // to pages a block is exactly its chunk: one page more than its bytes, all
  // of it resident. The other native ranges are page-aligned mmaps.
  std::map<std::string, uint64_t> filled, rounded;
  PageSet managed_pages, native_pages;
  for (const TruthRange& t : truth) {
    if (IsReservedOnly(t)) continue;
    const uint64_t pages = PageCeil(t.end) - PageFloor(t.start);
    SCOPED_TRACE(absl::StrFormat("%s %s 0x%x-0x%x", t.method, t.what, t.start, t.end));
    // Every filled page is resident at the request and at the exit.
    EXPECT_EQ(requested->ResidentBytes(PageFloor(t.start), PageCeil(t.end)), pages);
    EXPECT_EQ(exit.ResidentBytes(PageFloor(t.start), PageCeil(t.end)), pages);
    if (IsManaged(t)) {
      managed_pages.Add(PageFloor(t.start), PageCeil(t.end));
      continue;
    }
    native_pages.Add(PageFloor(t.start), PageCeil(t.end));
    const bool malloc_block = absl::StrContains(t.what, "NativeMemory.Alloc") || absl::StrContains(t.what, "AllocHGlobal");
    EXPECT_EQ(pages - (t.end - t.start), malloc_block ? kPage : 0);
    filled[t.method] += t.end - t.start;
    rounded[t.method] += pages;
  }
  ASSERT_EQ(filled.size(), 5u);  // LeakNativeMemory, LeakHGlobal, LeakMemoryMappedFile, LeakNativeMmap, LeakNativeReserveCommit
  ASSERT_TRUE(managed_pages.Intersect(native_pages).empty());
  PageSet all_pages = managed_pages;
  for (const auto& [start, end] : native_pages.ranges()) all_pages.Add(start, end);

  // At the end (the exit snapshot), over the truth widened to pages.
  const Json at_exit =
      Attribute(dir, trace, pid_text, WriteRanges(all_pages, dir + "/truth.pages"), has_exit ? "" : AtArg(exit));
  ASSERT_TRUE(at_exit.contains("rss_snapshot_time"));
  EXPECT_NEAR(at_exit["rss_snapshot_time"].get<double>(), exit.time / 1e9, 1e-6);
  std::map<std::string, uint64_t> by_method = RssByMethod(at_exit);
  for (const auto& [method, bytes] : rounded) EXPECT_EQ(by_method[method], bytes) << method << " at the exit";
  // The managed heap: all of it resident, none of it credited to a native leak's method.
  uint64_t managed_rss = 0;
  std::map<std::string, uint64_t> managed_by_method;
  for (const Json& r : at_exit["regions"]) {
    const uint64_t start = std::stoull(r["start"].get<std::string>(), nullptr, 16);
    if (!Holds(managed_pages, start)) continue;
    managed_rss += RssOr0(r["rss"]);
    for (const Json& s : r["stacks"]) {
      const std::string method = CSharpMethod(Credited(s));
      managed_by_method[method] += RssOr0(s["rss"]);
      EXPECT_EQ(filled.count(method), 0u) << "managed memory at " << r["start"] << " credited to " << method;
    }
  }
  EXPECT_EQ(managed_rss, managed_pages.Bytes());
  for (const auto& [method, bytes] : managed_by_method) {
    std::cout << "managed heap, resident, credited to " << (method.empty() ? "(no C# frame)" : method) << ": "
              << bytes << " bytes\n";
  }
  for (const auto& [method, bytes] : rounded) {
    std::cout << method << ": " << filled[method] << " bytes filled, " << bytes << " page-rounded, "
              << by_method[method] << " resident (exit snapshot)\n";
  }

  // At the requested snapshot, over the truth's own byte ranges (the
  // script's range list, the reservation's PROT_NONE rest included): the
  // resident bytes are the filled bytes exactly; the reservation's are
  // unknown (never read), not 0.
  const Json at_request = Attribute(dir, trace, pid_text, FindFile(dir, "dotnet-leak." + pid_text, ".truth.ranges"),
                                    AtArg(*requested));
  EXPECT_NEAR(at_request["rss_snapshot_time"].get<double>(), requested->time / 1e9, 1e-6);
  by_method = RssByMethod(at_request);
  for (const auto& [method, bytes] : filled) EXPECT_EQ(by_method[method], bytes) << method << " at the request";
  int reserved_regions = 0;
  for (const Json& r : at_request["regions"]) {
    const uint64_t start = std::stoull(r["start"].get<std::string>(), nullptr, 16);
    for (const TruthRange& t : truth) {
      if (IsReservedOnly(t) && t.start == start) {
        ++reserved_regions;
        EXPECT_TRUE(r["rss"].is_null()) << r.dump();
      }
    }
  }
  EXPECT_EQ(reserved_regions, 1);

  // No dump at all: `record` saved the runtime's table (ClrMD) at the
  // requested snapshot, and `attribute --unaccounted` takes the address
  // space from the trace at that moment, minus that table. Every native
  // leak's pages are in the answer, credited to its C# method with all its
  // filled bytes resident; no page of the managed heap is.
  // Its moment is the table's own (taken just after the requested snapshot):
  // --at that moment takes it, and that snapshot.
  const size_t said = log.find(absl::StrCat("the .NET runtime's table of pid ", pid, " at "));
  ASSERT_NE(said, std::string::npos) << log;
  const std::string table_at = log.substr(said, log.find('\n', said) - said);
  EXPECT_THAT(table_at, HasSubstr(" saved in " + trace + ".runtime/")) << table_at;
  const std::string at = table_at.substr(table_at.find(" at ") + 4, table_at.find(" saved") - table_at.find(" at ") - 4);
  CliRun unaccounted = Pageblame("attribute --json --unaccounted -i " + trace + " --pid " + pid_text + " --at " + at +
                                 " --perf-map-dir " + dir);
  ASSERT_EQ(unaccounted.exit_code, 0) << unaccounted.err;
  EXPECT_THAT(unaccounted.err, HasSubstr("saved by record then"));
  EXPECT_THAT(log, HasSubstr("pageblame attribute -i " + trace + " --unaccounted")) << log;
  const Json u = Json::parse(unaccounted.out);
  EXPECT_NEAR(u["rss_snapshot_time"].get<double>(), requested->time / 1e9, 1e-6);
  PageSet answer_pages;
  for (const Json& r : u["regions"]) {
    answer_pages.Add(PageFloor(std::stoull(r["start"].get<std::string>(), nullptr, 16)),
                     PageCeil(std::stoull(r["end"].get<std::string>(), nullptr, 16)));
  }
  EXPECT_TRUE(native_pages.Minus(answer_pages).empty()) << "native pages not unaccounted: "
                                                        << native_pages.Minus(answer_pages).Describe();
  EXPECT_TRUE(managed_pages.Intersect(answer_pages).empty())
      << "managed pages unaccounted: " << managed_pages.Intersect(answer_pages).Describe();
  by_method = RssByMethod(u);
  for (const auto& [method, bytes] : filled) {
    EXPECT_GE(by_method[method], bytes) << method << " in --unaccounted";
  }
}

}  // namespace
}  // namespace pageblame::testing

// `record --max-size`, for real (issue 42): perf records traces/src/rotate.c
// (blocks kept in its first second, then churn through deep stacks whose
// DWARF copies hardly compress, blocks kept half way and at the end) in
// chunks, each folded into TRACE.index and removed. A thread of this test
// watches the directory meanwhile: the recording's files never take more
// than the bound, while perf writes several times that (it says each chunk
// it closes: "[ perf record: Dump ...]", each at least an eighth of the
// bound). Afterwards only the index and the snapshots are left, and they
// answer: every kept block is named by `query` and `attribute` with the
// function that made it, and `maps` is the kernel's /proc/PID/maps the
// program wrote as its last act — after the folded state was thinned in
// memory (--max-memory) while it recorded.
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/replay/recording_file.h"
#include "tests/cli_runner.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kBound = 2 << 20;

// The bytes the recording's files (t.data, t.data.*) take in `dir` now.
uint64_t RecordingBytes(const std::string& dir) {
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename();
    if (name != "t.data" && !absl::StartsWith(name, "t.data.")) continue;
    struct stat st;
    if (::lstat(e.path().c_str(), &st) == 0 && S_ISREG(st.st_mode)) total += uint64_t(st.st_blocks) * 512;
  }
  return total;
}

// The stack's function names of a JSON origin (or commit) object.
std::vector<std::string> Symbols(const nlohmann::json& origin) {
  std::vector<std::string> out;
  for (const auto& f : origin["stack"]) out.push_back(f["symbol"].is_null() ? "" : f["symbol"].get<std::string>());
  return out;
}

TEST(RotateCliTest, AMaxSizeRecordingStaysWithinItAndStillNamesItsFirstSecond) {
  if (geteuid() != 0) GTEST_SKIP() << "recording syscall tracepoints needs root";
  const std::string dir = ScratchPath("rotate");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  const std::string trace = dir + "/t.data";
  std::atomic<bool> done{false};
  std::atomic<uint64_t> peak{0};
  std::thread watch([&] {
    while (!done) {
      peak = std::max<uint64_t>(peak, RecordingBytes(dir));
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  // Checkpoints twice a second and a small memory bound: the folded state
  // is thinned in memory too while it records, and still names everything.
  // Twice rotate's default rate (300 us between call pairs, ~5 k calls/s),
  // far below where perf loses events: with perf at nice -10 (record
  // --max-size) the churn slows on a busy machine, and at the default rate
  // 4 s wrote only 2.4-3x the bound there.
  CliRun rec = Pageblame(absl::StrCat("record --max-size 2M --checkpoint-every 0.5 --max-memory 1M -o ", trace,
                                      " -- ", PAGEBLAME_BINARY_DIR, "/tests/rotate ", dir, " 4 300"));
  done = true;
  watch.join();
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  EXPECT_THAT(rec.err, HasSubstr("no events lost")) << rec.err;
  size_t dumps = 0;
  for (size_t at = 0; (at = rec.err.find("[ perf record: Dump ", at)) != std::string::npos; ++at) ++dumps;
  // Every chunk but the last holds at least --switch-output's 256 KiB.
  EXPECT_GE((dumps - 1) * (kBound / 8), 3 * kBound) << dumps << " chunks\n" << rec.err;
  EXPECT_LE(peak.load(), kBound) << rec.err;
  EXPECT_GT(peak.load(), 0u);
  EXPECT_THAT(rec.err, HasSubstr("--max-size 2.0 MiB: perf wrote")) << rec.err;
  // The index in memory stayed within --max-memory and a step (1/16 of it).
  const std::string took = "the folded index took ";
  const size_t at = rec.err.find(took);
  ASSERT_NE(at, std::string::npos) << rec.err;
  double amount = 0;
  char unit[4] = {};
  ASSERT_EQ(std::sscanf(rec.err.c_str() + at + took.size(), "%lf %3s", &amount, unit), 2) << rec.err;
  const double bytes = amount * (std::string(unit) == "MiB" ? 1 << 20 : std::string(unit) == "KiB" ? 1 << 10 : 1);
  EXPECT_LE(bytes, (1 << 20) * 17.0 / 16) << rec.err;
  EXPECT_THAT(rec.err, HasSubstr(" of memory at most (--max-memory 1.0 MiB: its calls, versions, stacks, strings"))
      << rec.err;
  EXPECT_THAT(rec.err, HasSubstr(" with the blocks made ahead for the replay; thinned in memory ")) << rec.err;
  // What is left: the index and the snapshots (residency and heap), no raw
  // chunk.
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename();
    if (absl::StartsWith(name, "t.data")) left.push_back(name);
  }
  std::sort(left.begin(), left.end());
  EXPECT_THAT(left, ::testing::ElementsAre("t.data.heap", "t.data.index", "t.data.rss"));

  std::string maps_file, truth_file;
  uint32_t pid = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename();
    if (absl::StartsWith(name, "rotate.") && absl::EndsWith(name, ".maps")) {
      maps_file = e.path();
      ASSERT_TRUE(absl::SimpleAtoi(name.substr(7, name.size() - 12), &pid)) << name;
    }
    if (absl::StartsWith(name, "rotate.") && absl::EndsWith(name, ".tsv")) truth_file = e.path();
  }
  ASSERT_FALSE(maps_file.empty()) << "the program wrote no maps file";
  ASSERT_FALSE(truth_file.empty()) << "the program wrote no truth file";

  // maps: what the replay says the process made is what the kernel had.
  CliRun maps = Pageblame(absl::StrCat("maps --json -i ", trace, " --pid ", pid));
  ASSERT_EQ(maps.exit_code, 0) << maps.err;
  EXPECT_THAT(maps.err, ::testing::Not(HasSubstr("replay"))) << maps.err;
  PageSet created;
  for (const auto& r : nlohmann::json::parse(maps.out)) {
    if (r["origin"].is_null()) continue;
    created.Add(std::stoull(r["start"].get<std::string>(), nullptr, 16),
                std::stoull(r["end"].get<std::string>(), nullptr, 16));
  }
  const PageSet expected = ProcessMadePages(ReadMapsFile(maps_file), PAGEBLAME_BINARY_DIR "/tests/rotate");
  EXPECT_TRUE(created == expected) << "created but not in maps:" << created.Minus(expected).Describe()
                                   << "\nin maps but not created:" << expected.Minus(created).Describe();

  // The heap snapshots read against the folded index (its span and pids).
  CliRun heap = Pageblame(absl::StrCat("heap --json -i ", trace, " --pid ", pid));
  ASSERT_EQ(heap.exit_code, 0) << heap.err;
  EXPECT_EQ(nlohmann::json::parse(heap.out)["allocator"], "glibc") << heap.out;

  // query and attribute name every kept block's function.
  const std::vector<TruthRow> truth = ReadTruth(truth_file);
  ASSERT_EQ(truth.size(), 4u);
  CliRun attr = Pageblame(absl::StrCat("attribute --format json --by create -i ", trace, " --pid ", pid,
                                       " --regions ", maps_file));
  ASSERT_EQ(attr.exit_code, 0) << attr.err;
  const nlohmann::json attributed = nlohmann::json::parse(attr.out);
  for (const TruthRow& row : truth) {
    SCOPED_TRACE(row.origin);
    CliRun q = Pageblame(absl::StrCat("query --json -i ", trace, " --pid ", pid, " 0x", absl::Hex(row.start)));
    ASSERT_EQ(q.exit_code, 0) << q.err;
    const nlohmann::json answer = nlohmann::json::parse(q.out);
    ASSERT_EQ(answer.size(), 1u);
    ASSERT_FALSE(answer[0]["origin"].is_null());
    EXPECT_THAT(Symbols(answer[0]["origin"]), ::testing::Contains(row.origin));
    bool named = false;
    for (const auto& r : attributed["regions"]) {
      const uint64_t start = std::stoull(r["start"].get<std::string>(), nullptr, 16);
      const uint64_t end = std::stoull(r["end"].get<std::string>(), nullptr, 16);
      if (row.start < start || row.start >= end) continue;
      for (const auto& s : r["stacks"]) {
        for (const char* key : {"origin", "commit"}) {
          if (s.contains(key) && !s[key].is_null() && absl::c_linear_search(Symbols(s[key]), row.origin)) {
            named = true;
          }
        }
      }
    }
    EXPECT_TRUE(named) << "attribute does not name " << row.origin;
  }
}

// Snapshots taken often enough to pass their share of --max-size (an
// eighth of it, half each for TRACE.rss and TRACE.heap) are thinned while
// recording: the files stay within it, the summary says what went, and the
// snapshot at the program's exit (pinned) still gives each region's
// resident bytes.
TEST(RotateCliTest, SnapshotsAreThinnedToTheirShareOfMaxSize) {
  if (geteuid() != 0) GTEST_SKIP() << "recording syscall tracepoints needs root";
  const std::string dir = ScratchPath("rotate-thin");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  const std::string trace = dir + "/t.data";
  CliRun rec = Pageblame(absl::StrCat("record --max-size 1M --rss-every 0.01 -o ", trace, " -- ",
                                      PAGEBLAME_BINARY_DIR, "/tests/rotate ", dir, " 6"));
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  constexpr uint64_t kShare = (1 << 20) / 16, kRecordSlack = 4096;
  for (const char* side : {".rss", ".heap"}) {
    struct stat st;
    ASSERT_EQ(::stat((trace + side).c_str(), &st), 0) << side;
    EXPECT_LE(uint64_t(st.st_size), kShare + kRecordSlack) << side << "\n" << rec.err;
    EXPECT_FALSE(std::filesystem::exists(trace + side + ".thin"));
  }
  // How many residency snapshots were taken depends on the machine's load
  // (one every 10 ms if it keeps up, ~140 bytes each): when they passed the
  // share, the summary says how many were kept.
  const std::string said = " residency snapshots in ";
  const size_t at = rec.err.find(said);
  ASSERT_NE(at, std::string::npos) << rec.err;
  const size_t line = rec.err.rfind('\n', at) + 1;
  const std::string prefix = "pageblame record: ";
  size_t taken = 0, kept = 0;
  ASSERT_TRUE(absl::SimpleAtoi(rec.err.substr(line + prefix.size(), at - line - prefix.size()), &taken))
      << rec.err.substr(line, 80);
  const std::string thinned = "(thinned by age: ";
  const size_t thin = rec.err.find(thinned, at);
  if (thin != std::string::npos && thin < rec.err.find('\n', at)) {
    const size_t from = thin + thinned.size();
    ASSERT_TRUE(absl::SimpleAtoi(rec.err.substr(from, rec.err.find(' ', from) - from), &kept));
    EXPECT_LT(kept, taken);
  } else {
    EXPECT_LE(taken * 120, kShare) << "more snapshots than fit, none thinned\n" << rec.err;
  }
  uint32_t pid = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename();
    if (absl::StartsWith(name, "rotate.") && absl::EndsWith(name, ".maps")) {
      ASSERT_TRUE(absl::SimpleAtoi(name.substr(7, name.size() - 12), &pid)) << name;
    }
  }
  ASSERT_NE(pid, 0u);
  CliRun maps = Pageblame(absl::StrCat("maps -i ", trace, " --pid ", pid, " --json"));
  ASSERT_EQ(maps.exit_code, 0) << maps.err;
  bool early = false;
  for (const auto& r : nlohmann::json::parse(maps.out)) {
    if (r["origin"].is_null() || Symbols(r["origin"]).size() < 2 || Symbols(r["origin"])[1] != "early_cache") continue;
    early = true;
    EXPECT_GT(r["rss"].get<uint64_t>(), 0u);
  }
  EXPECT_TRUE(early) << maps.out.substr(0, 2000);
}

// perf makes each chunk by name: not in a directory others can change, even
// with --force; and an earlier recording's chunks are never folded into a
// new one. Both refused before perf starts, the directory left as it was.
TEST(RotateCliTest, AMaxSizeRecordingRefusesWhatItCannotKeepApart) {
  if (geteuid() != 0) GTEST_SKIP() << "record needs root";
  const std::string shared = ScratchPath("rotate-shared");
  ASSERT_EQ(mkdir(shared.c_str(), 0777), 0);
  ASSERT_EQ(chmod(shared.c_str(), 0777), 0);
  CliRun r = Pageblame("record --force --max-size 2M -o " + shared + "/t.data -- /bin/true");
  ExpectOneLineError(r, "where perf makes each new chunk by name");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(std::filesystem::is_empty(shared)) << "the trace made for perf is left";

  const std::string dir = ScratchPath("rotate-old");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  std::ofstream(dir + "/t.data.2026112901450200") << "an earlier chunk";
  CliRun old = Pageblame("record --max-size 2M -o " + dir + "/t.data -- /bin/true");
  ExpectOneLineError(old, "t.data.2026112901450200 (a chunk of an earlier recording) is there: move it away");
  EXPECT_TRUE(std::filesystem::exists(dir + "/t.data.2026112901450200"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/t.data"));
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The processes whose parent is `parent`, with their comm.
std::vector<std::pair<pid_t, std::string>> ChildrenOf(pid_t parent) {
  std::vector<std::pair<pid_t, std::string>> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    pid_t pid = 0;
    if (!absl::SimpleAtoi(e.path().filename().string(), &pid)) continue;
    std::ifstream in(e.path() / "stat");
    std::string line;
    std::getline(in, line);
    const size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent) out.emplace_back(pid, line.substr(line.find('(') + 1, close - line.find('(') - 1));
  }
  return out;
}

bool Alive(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  std::getline(in, line);
  const size_t close = line.rfind(')');
  return close != std::string::npos && line.size() > close + 2 && line[close + 2] != 'Z';
}

// The checkpoint TRACE.index holds now, if it is one.
std::optional<replay::FoldCheckpoint> CheckpointAt(const std::string& index) {
  std::ifstream in(index, std::ios::binary);
  std::string head(replay::RecordingFile::kHeaderBytes, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  const std::optional<replay::RecordingFile::Folded> f = replay::RecordingFile::PeekFolded(head);
  return f ? f->checkpoint : std::nullopt;
}

// `record --max-size 2M --checkpoint-every 0.2` of rotate for up to 60 s
// into DIR/t.data, its stderr in DIR/record.err, started in the background
// (SIGINT ignored if asked, as a script's `&` does).
pid_t StartRecorder(const std::string& dir, bool ignore_sigint) {
  const std::string trace = dir + "/t.data";
  const std::string pageblame = std::string(PAGEBLAME_BINARY_DIR) + "/bin/pageblame";
  const std::string rotate = std::string(PAGEBLAME_BINARY_DIR) + "/tests/rotate";
  const pid_t recorder = fork();
  if (recorder == 0) {
    if (ignore_sigint) signal(SIGINT, SIG_IGN);
    freopen((dir + "/record.err").c_str(), "w", stderr);
    freopen("/dev/null", "w", stdout);
    execl(pageblame.c_str(), pageblame.c_str(), "record", "--max-size", "2M", "--checkpoint-every", "0.2", "-o",
          trace.c_str(), "--", rotate.c_str(), dir.c_str(), "60", nullptr);
    _exit(127);
  }
  return recorder;
}

// Whether TRACE.index becomes a checkpoint holding `chunks` chunks or more
// within 30 s.
bool WaitForCheckpoint(const std::string& trace, uint64_t chunks) {
  for (int i = 0; i < 600; ++i) {
    if (std::optional<replay::FoldCheckpoint> c = CheckpointAt(trace + ".index"); c && c->chunks >= chunks) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// `systemctl stop` (SIGTERM) and `kill -INT` of a recorder started as a
// script's background job (`nohup pageblame record ... &`: SIGINT ignored
// from the start) stop a --max-size recording as Ctrl-C does: the summary,
// the folded index written, nothing left of the chunks. (Its folding thread
// once took the signal and the recorder died of it; an inherited SIG_IGN
// once kept SIGINT from it.)
TEST(RotateCliTest, SigintOrSigtermStopsABackgroundMaxSizeRecording) {
  if (geteuid() != 0) GTEST_SKIP() << "recording syscall tracepoints needs root";
  for (int sig : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(sig == SIGINT ? "SIGINT" : "SIGTERM");
    const std::string dir = ScratchPath(sig == SIGINT ? "rotate-int" : "rotate-term");
    ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
    const std::string trace = dir + "/t.data";
    // As a non-interactive shell starts a background job: SIGINT ignored.
    const pid_t recorder = StartRecorder(dir, /*ignore_sigint=*/true);
    ASSERT_GT(recorder, 0);
    // Folding under way: a checkpoint with a chunk in it.
    ASSERT_TRUE(WaitForCheckpoint(trace, 1)) << ReadText(dir + "/record.err");
    ASSERT_EQ(::kill(recorder, sig), 0);
    int status = 0;
    pid_t ended = 0;
    for (int i = 0; i < 600 && ended == 0; ++i) {
      ended = waitpid(recorder, &status, WNOHANG);
      if (ended == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (ended == 0) {
      ::kill(recorder, SIGKILL);
      waitpid(recorder, &status, 0);
      FAIL() << "the recorder did not stop within 30 s: " << ReadText(dir + "/record.err");
    }
    const std::string err = ReadText(dir + "/record.err");
    ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0) << "\n" << err;
    EXPECT_EQ(WEXITSTATUS(status), 0) << err;
    EXPECT_THAT(err, HasSubstr("--max-size 2.0 MiB: perf wrote")) << err;
    EXPECT_FALSE(CheckpointAt(trace + ".index").has_value()) << "the stop's index did not replace the checkpoint";
    CliRun maps = Pageblame("maps -i " + trace);
    EXPECT_EQ(maps.exit_code, 0) << maps.err;
    EXPECT_THAT(maps.err, ::testing::Not(HasSubstr("without a stop"))) << maps.err;
  }
}


// A recorder killed with SIGKILL after a few checkpoints (the OOM killer, a
// careless kill -9): perf stops by itself (it is told when its parent dies)
// and so does the program it runs; what is left answers every command over
// the recording up to the last checkpoint — the blocks kept in the first
// second are still named — and says, on stderr, that the recording ended
// without a stop and which chunk files were not folded. Recording again
// over it is refused; a damaged checkpoint is refused, saying so.
TEST(RotateCliTest, ARecorderKilledLeavesItsLastCheckpointReadable) {
  if (geteuid() != 0) GTEST_SKIP() << "recording syscall tracepoints needs root";
  const std::string dir = ScratchPath("rotate-kill");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  const std::string trace = dir + "/t.data";
  const pid_t recorder = StartRecorder(dir, /*ignore_sigint=*/false);
  ASSERT_GT(recorder, 0);
  // A few checkpoints, perf's chunks folded into each.
  ASSERT_TRUE(WaitForCheckpoint(trace, 3)) << ReadText(dir + "/record.err");
  const std::vector<std::pair<pid_t, std::string>> children = ChildrenOf(recorder);
  pid_t perf = 0;
  for (const auto& [pid, comm] : children) {
    if (comm == "perf") perf = pid;
  }
  ASSERT_NE(perf, 0) << "no perf under the recorder";
  std::vector<pid_t> program;
  for (const auto& [pid, comm] : ChildrenOf(perf)) program.push_back(pid);
  ASSERT_EQ(::kill(recorder, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(recorder, &status, 0), recorder);
  // perf gets SIGTERM as its parent dies, and ends the program it runs.
  for (int i = 0; i < 300 && Alive(perf); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(Alive(perf)) << "perf still records after its recorder was killed";
  for (pid_t p : program) {
    for (int i = 0; i < 100 && Alive(p); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(Alive(p)) << "the recorded program still runs";
  }

  // maps: exit 0, the warning, the first second's blocks named.
  CliRun maps = Pageblame(absl::StrCat("maps --json -i ", trace));
  ASSERT_EQ(maps.exit_code, 0) << maps.err;
  EXPECT_THAT(maps.err, HasSubstr("the recording ended without a stop: the recorder stopped at the checkpoint of "));
  EXPECT_THAT(maps.err, ::testing::AnyOf(HasSubstr("not folded: t.data"), HasSubstr("no chunk file after it is left")));
  std::map<std::string, std::pair<uint64_t, uint64_t>> early;  // function -> its region
  for (const auto& r : nlohmann::json::parse(maps.out)) {
    if (r["origin"].is_null()) continue;
    for (const std::string& f : Symbols(r["origin"])) {
      if (f == "early_cache" || f == "early_table") {
        early[f] = {std::stoull(r["start"].get<std::string>(), nullptr, 16),
                    std::stoull(r["end"].get<std::string>(), nullptr, 16)};
      }
    }
  }
  ASSERT_EQ(early.size(), 2u) << maps.out;
  // query and attribute name them too.
  std::ofstream regions(dir + "/early.maps");
  for (const auto& [f, range] : early) {
    regions << absl::StrCat(absl::Hex(range.first), "-", absl::Hex(range.second), " rw-p 00000000 00:00 0\n");
  }
  regions.close();
  for (const auto& [f, range] : early) {
    SCOPED_TRACE(f);
    CliRun q = Pageblame(absl::StrCat("query --json -i ", trace, " 0x", absl::Hex(range.first)));
    ASSERT_EQ(q.exit_code, 0) << q.err;
    EXPECT_THAT(q.err, HasSubstr("the recording ended without a stop"));
    const nlohmann::json answer = nlohmann::json::parse(q.out);
    ASSERT_GE(answer.size(), 1u);
    EXPECT_THAT(Symbols(answer[0]["origin"]), ::testing::Contains(f));
  }
  CliRun attr =
      Pageblame(absl::StrCat("attribute --format json --by create -i ", trace, " --regions ", dir, "/early.maps"));
  ASSERT_EQ(attr.exit_code, 0) << attr.err;
  EXPECT_THAT(attr.err, HasSubstr("the recording ended without a stop"));
  for (const char* f : {"early_cache", "early_table"}) EXPECT_THAT(attr.out, HasSubstr(f));

  // Recording over it: refused, the files left as they are.
  CliRun again = Pageblame(absl::StrCat("record --max-size 2M -o ", trace, " -- /bin/true"));
  ExpectOneLineError(again, "is the checkpoint of a recording that was not stopped (its recorder was killed, or still records)");
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_TRUE(CheckpointAt(trace + ".index").has_value());

  // Damaged: refused with a message naming the file, never a crash.
  std::filesystem::resize_file(trace + ".index", std::filesystem::file_size(trace + ".index") - 64);
  CliRun damaged = Pageblame(absl::StrCat("maps -i ", trace));
  EXPECT_EQ(damaged.exit_code, 1) << damaged.err;
  EXPECT_FALSE(damaged.crashed);
  EXPECT_THAT(damaged.err, HasSubstr("t.data.index: the index is damaged"));
}

}  // namespace
}  // namespace pageblame::testing

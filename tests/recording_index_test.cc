// The recording's index (TRACE.index, replay/recording_file.h) as a user
// meets it: the first command replays and writes it, the next loads it and
// answers byte for byte as a replay does; a trace changed since, a binary
// found differently (--symfs), a damaged or untrusted index are each said
// with -v and the trace is replayed, never a wrong answer. And on every
// bundled trace: what is kept decodes to what was encoded.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/build_info.h"
#include "processor/base/temp_dir_for_test.h"
#include "processor/replay/recording_file.h"
#include "processor/replay/trace_loader.h"
#include "tests/cli_runner.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void Spit(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

// A bundled trace copied into its own directory: the index written beside
// it is this test's alone.
struct TraceCopy {
  TempDir dir;
  std::string trace;
  explicit TraceCopy(const std::string& name) : trace(dir.path() + "/t.data") {
    std::filesystem::copy_file(TracePath(name), trace);
  }
  std::string index() const { return trace + ".index"; }
};

// stdout and the warnings, without -v's lines (which say how it loaded).
struct Answer {
  std::string out, err;
  int exit_code = -1;
  std::string note;  // -v's "pageblame: TRACE: ..." line about the index
};

Answer Ask(const std::string& args) {
  CliRun r = Pageblame(args + " -v");
  Answer a{r.out, "", r.exit_code, ""};
  EXPECT_FALSE(r.crashed) << args << "\n" << r.err;
  for (size_t at = 0; at < r.err.size();) {
    size_t nl = r.err.find('\n', at);
    if (nl == std::string::npos) nl = r.err.size();
    const std::string line = r.err.substr(at, nl - at);
    at = nl + 1;
    if (line.find("index") != std::string::npos && line.find("pageblame: ") == 0) {
      a.note += line + "\n";
    } else if (line.find("warning") != std::string::npos || line.find("note:") != std::string::npos) {
      a.err += line + "\n";
    }
  }
  return a;
}

void ExpectSameAnswer(const Answer& a, const Answer& b) {
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(a.err, b.err);
  EXPECT_EQ(a.exit_code, b.exit_code);
}

TEST(RecordingIndexTest, TheSecondCommandLoadsWhatTheFirstReplayed) {
  TraceCopy t("rules-trace.data");
  const std::string cmd = "maps --json -i " + t.trace;
  const Answer replayed = Ask(cmd + " --no-index");
  EXPECT_FALSE(std::filesystem::exists(t.index())) << "--no-index writes no index";
  const Answer first = Ask(cmd);
  EXPECT_THAT(first.note, HasSubstr("replayed; " + t.index() + " written"));
  struct stat st {};
  ASSERT_EQ(::stat(t.index().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_LT(st.st_size, std::filesystem::file_size(t.trace));
  const Answer second = Ask(cmd);
  EXPECT_THAT(second.note, HasSubstr("loaded from " + t.index()));
  ExpectSameAnswer(first, replayed);
  ExpectSameAnswer(second, replayed);
  // Every command, not only maps: growth, query, attribute from the index.
  for (const std::string& other :
       {"growth --json -i " + t.trace, "query -i " + t.trace + " --pid 10981 --history 0x100010000000 0x7f978e010000",
        "attribute --json -i " + t.trace + " --pid 10981 --regions " + TracePath("maps/rules-trace.10981.maps")}) {
    SCOPED_TRACE(other);
    const Answer loaded = Ask(other);
    EXPECT_THAT(loaded.note, HasSubstr("loaded from"));
    ExpectSameAnswer(loaded, Ask(other + " --no-index"));
  }
}

TEST(RecordingIndexTest, TheIndexCommandWritesItAhead) {
  TraceCopy t("alloc-dwarf.data");
  CliRun r = Pageblame("index -i " + t.trace);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr("replayed; " + t.index() + " written"));
  EXPECT_THAT(Ask("maps --json -i " + t.trace).note, HasSubstr("loaded from " + t.index()));
  r = Pageblame("index -i " + t.trace);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("loaded from " + t.index()));
  // A pipe has none: usage; a trace that is not one: bad input.
  r = Pageblame("index -i - < " + t.trace);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  Spit(t.dir.path() + "/not.data", "not a trace");
  r = Pageblame("index -i " + t.dir.path() + "/not.data");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(t.dir.path() + "/not.data.index"));
}

TEST(RecordingIndexTest, ATraceChangedSinceIsReplayed) {
  TraceCopy t("rules-trace.data");
  const std::string cmd = "growth --json -i " + t.trace;
  const Answer first = Ask(cmd);
  ASSERT_TRUE(std::filesystem::exists(t.index()));
  // Same bytes, a new modification time (a trace recorded again is one).
  const struct timespec times[2] = {{0, UTIME_NOW}, {1'000'000'000, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, t.trace.c_str(), times, 0), 0);
  const Answer again = Ask(cmd);
  EXPECT_THAT(again.note, HasSubstr("stale"));
  EXPECT_THAT(again.note, HasSubstr("written"));
  ExpectSameAnswer(again, first);
  EXPECT_THAT(Ask(cmd).note, HasSubstr("loaded from"));
}

TEST(RecordingIndexTest, ADamagedIndexIsSaidAndTheTraceReplayed) {
  TraceCopy t("rules-lost.data");
  const std::string cmd = "maps --json -i " + t.trace;
  const Answer first = Ask(cmd);
  const std::string good = Slurp(t.index());
  ASSERT_GT(good.size(), 100u);
  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x5a;  // inside the zstd frame
  for (const std::string& bad : {good.substr(0, good.size() / 2), flipped, std::string("PBINDEX"), std::string()}) {
    Spit(t.index(), bad);
    const Answer a = Ask(cmd);
    EXPECT_THAT(a.note, Not(HasSubstr("loaded from")));
    EXPECT_THAT(a.note, HasSubstr("the trace is replayed"));
    ExpectSameAnswer(a, first);
    // ... and the damaged file replaced by a good one.
    EXPECT_EQ(Slurp(t.index()), good);
  }
}

TEST(RecordingIndexTest, AnIndexOthersCouldWriteIsNotUsed) {
  TraceCopy t("rules-trace.data");
  const std::string cmd = "maps --json -i " + t.trace;
  const Answer first = Ask(cmd);
  ASSERT_EQ(::chmod(t.index().c_str(), 0666), 0);
  const Answer a = Ask(cmd);
  EXPECT_THAT(a.note, Not(HasSubstr("loaded from")));
  ExpectSameAnswer(a, first);
}

TEST(RecordingIndexTest, BinariesFoundDifferentlyMakeItStale) {
  // traces/src/c32.c: with its binary (through --symfs) the replay knows a
  // 32-bit program and replays none of its calls; without it, it does not.
  // An index made with the one must not answer for the other.
  TraceCopy t("c32-raw.data");
  const std::string symfs = MakeSymfs("c32-index-symfs", std::vector<std::pair<std::string, std::string>>{
                                                              {"/tmp/unseen/w/c32", SourceDir() + "/traces/bin/c32"}});
  ASSERT_FALSE(symfs.empty());
  const std::string with = "maps --json -i " + t.trace + " --symfs " + symfs;
  const std::string without = "maps --json -i " + t.trace;
  const Answer with_replayed = Ask(with + " --no-index");
  const Answer without_replayed = Ask(without + " --no-index");
  ASSERT_NE(with_replayed.err, without_replayed.err) << "the binary changes the answer";
  Ask(with);
  const Answer a = Ask(without);
  EXPECT_THAT(a.note, HasSubstr("stale"));
  ExpectSameAnswer(a, without_replayed);
  const Answer b = Ask(with);
  EXPECT_THAT(b.note, HasSubstr("stale"));
  ExpectSameAnswer(b, with_replayed);
}

TEST(RecordingIndexTest, EveryBundledTraceDecodesToWhatWasEncoded) {
  std::vector<std::string> traces;
  for (const auto& e : std::filesystem::directory_iterator(SourceDir() + "/traces")) {
    if (e.path().extension() == ".data") traces.push_back(e.path().filename());
  }
  traces.push_back("dotnet/dotnet-leak.data");
  ASSERT_GT(traces.size(), 20u);
  for (const std::string& name : traces) {
    SCOPED_TRACE(name);
    replay::LoadOptions o = TraceLoadOptions(name);
    o.preload_symbols = false;
    auto loaded = replay::LoadTrace(o);
    if (!loaded.ok()) continue;  // the traces that are refused (tests/damaged_trace_cli_test)
    auto id = replay::RecordingFile::Identity::Of(o);
    ASSERT_TRUE(id.ok()) << id.status();
    const std::string bytes = replay::RecordingFile::Encode(**loaded, *id);
    auto decoded = replay::RecordingFile::Decode(bytes, "index", *id, o.symbols);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ(replay::RecordingFile::Encode(**decoded, *id), bytes);
    EXPECT_EQ((*decoded)->index().stats().calls, (*loaded)->index().stats().calls);
    // Another trace's identity: stale, said so.
    replay::RecordingFile::Identity other = *id;
    ++other.size;
    auto stale = replay::RecordingFile::Decode(bytes, "index", other, o.symbols);
    EXPECT_EQ(stale.status().code(), absl::StatusCode::kFailedPrecondition) << stale.status();
  }
}

// What a recorder killed during `record --max-size` leaves: TRACE.index as
// its last checkpoint (made here from a bundled trace, as the folder makes
// it), chunk files perf wrote after it, perhaps a checkpoint cut short
// (TRACE.index.new). Every command answers from the checkpoint as from the
// whole recording, says on stderr where the recording stopped and names
// the chunk files not folded; a damaged checkpoint is refused, exit 1.
TEST(RecordingIndexTest, AKilledRecordingsCheckpointAnswersAndSaysWhereItStopped) {
  TempDir dir;
  const std::string trace = dir.path() + "/t.data";
  replay::LoadOptions whole = TraceLoadOptions("rules-record.data");
  whole.preload_symbols = false;
  auto loaded = replay::LoadTrace(whole);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  replay::LoadOptions o;
  o.path = trace;
  o.folded = true;
  auto id = replay::RecordingFile::Identity::Of(o);
  ASSERT_TRUE(id.ok()) << id.status();
  replay::FoldCheckpoint c;
  c.wall_ns = uint64_t{1796000000} * 1000000000;  // 2026-11-30 00:53:20 UTC
  c.chunks = 3;
  c.last_chunk = "t.data.2026112902132000";
  c.until = (*loaded)->index().stats().last_time;
  const std::string bytes =
      replay::RecordingFile::Encode(replay::LoadedView::Of(**loaded), *id, 0, &c);
  const std::optional<replay::RecordingFile::Folded> peek = replay::RecordingFile::PeekFolded(bytes.substr(0, replay::RecordingFile::kHeaderBytes));
  ASSERT_TRUE(peek.has_value());
  ASSERT_TRUE(peek->checkpoint.has_value());
  EXPECT_EQ(peek->checkpoint->last_chunk, c.last_chunk);
  Spit(trace + ".index", bytes);
  ASSERT_EQ(::chmod((trace + ".index").c_str(), 0600), 0);
  // A chunk perf wrote after the checkpoint (a bundled trace stands in).
  std::filesystem::copy_file(TracePath("rules-record.data"), trace + ".2026112902132500");
  Spit(trace + ".index.new", "PBINDEX");  // cut short by the kill
  for (const char* command : {"maps", "growth", "query 0x7f0000000000"}) {
    SCOPED_TRACE(command);
    const std::string verb = std::string(command).substr(0, std::string(command).find(' '));
    const std::string rest = std::string(command).substr(verb.size());
    CliRun from_checkpoint = Pageblame(absl::StrCat(verb, " -i ", trace, rest));
    CliRun from_trace = Pageblame(absl::StrCat(verb, " -i ", TracePath("rules-record.data"), rest));
    EXPECT_FALSE(from_checkpoint.crashed) << from_checkpoint.err;
    EXPECT_EQ(from_checkpoint.exit_code, from_trace.exit_code) << from_checkpoint.err;
    EXPECT_EQ(from_checkpoint.out, from_trace.out);
    EXPECT_THAT(from_checkpoint.err,
                HasSubstr("the recording ended without a stop: the recorder stopped at the checkpoint of "
                          "2026-11-30 00:53:20 UTC"));
    EXPECT_THAT(from_checkpoint.err, HasSubstr("3 chunks folded, the last t.data.2026112902132000"));
    EXPECT_THAT(from_checkpoint.err, HasSubstr("1 chunk file after it was not folded: t.data.2026112902132500"));
    EXPECT_THAT(from_checkpoint.err, HasSubstr("t.data.index.new, a checkpoint cut short when the recorder stopped, is ignored"));
  }
  // Damaged: refused, saying so; never a replay of the chunks left.
  Spit(trace + ".index", bytes.substr(0, bytes.size() - 100));
  ASSERT_EQ(::chmod((trace + ".index").c_str(), 0600), 0);
  CliRun damaged = Pageblame(absl::StrCat("maps -i ", trace));
  EXPECT_EQ(damaged.exit_code, 1) << damaged.err;
  EXPECT_THAT(damaged.err, HasSubstr("t.data.index: the index is damaged"));
  EXPECT_THAT(damaged.out, Not(HasSubstr("0x")));
}

// A folded recording (record --max-size) has no trace to replay again: when
// a binary its replay read changed since (a running .NET service's jitdump
// grows as long as it runs; a rebuild rewrites a dll), its index is still
// the answer, with a warning saying what changed — never "stale", which
// would leave nothing to answer from.
TEST(RecordingIndexTest, AFoldedRecordingWhoseBinaryChangedSinceStillAnswers) {
  TempDir dir;
  // A copy (MakeSymfs links to the bundled binary, which must not change).
  const std::string symfs = dir.path() + "/symfs";
  std::filesystem::create_directories(symfs + "/tmp/unseen/w");
  std::filesystem::copy_file(SourceDir() + "/traces/bin/c32", symfs + "/tmp/unseen/w/c32");
  replay::LoadOptions whole = TraceLoadOptions("c32-raw.data");
  whole.preload_symbols = false;
  whole.symbols.symfs = symfs;
  auto loaded = replay::LoadTrace(whole);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_FALSE((*loaded)->dso_lookups().empty()) << "the replay read no binary: the test would show nothing";
  const std::string trace = dir.path() + "/t.data";
  replay::LoadOptions o;
  o.path = trace;
  o.folded = true;
  o.symbols = whole.symbols;
  auto id = replay::RecordingFile::Identity::Of(o);
  ASSERT_TRUE(id.ok()) << id.status();
  Spit(trace + ".index", replay::RecordingFile::Encode(replay::LoadedView::Of(**loaded), *id, 0, nullptr));
  ASSERT_EQ(::chmod((trace + ".index").c_str(), 0600), 0);
  const std::string args = absl::StrCat("maps -i ", trace, " --symfs ", symfs);
  CliRun before = Pageblame(args);
  ASSERT_EQ(before.exit_code, 0) << before.err;
  EXPECT_THAT(before.err, Not(HasSubstr("since the recording was folded")));
  // The binary grows by a byte.
  std::ofstream(symfs + "/tmp/unseen/w/c32", std::ios::binary | std::ios::app) << '\0';
  CliRun after = Pageblame(args);
  EXPECT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(after.out, before.out);
  EXPECT_THAT(after.err, HasSubstr("since the recording was folded: its stacks are as they were unwound then"));
  EXPECT_THAT(after.err, HasSubstr("c32"));
  EXPECT_THAT(after.err, Not(HasSubstr("stale")));
}

// An index file's bytes with another header: its format and maker replaced
// (a format before 5 has none: "" leaves it out), its replay version made
// another build's when `other_replay`. The body is as it was.
std::string WithHeader(const std::string& bytes, uint32_t format, const std::string& maker, bool other_replay) {
  // "PBINDEX\1", u32 format, the maker (a one-byte length: < 128), the replay.
  const size_t maker_length = static_cast<unsigned char>(bytes.at(12));
  EXPECT_LT(maker_length, 128u);
  std::string rest = bytes.substr(13 + maker_length);
  if (other_replay) rest.at(1) = rest.at(1) == 'f' ? '0' : 'f';  // the first hex digit of the replay's hash
  std::string out = bytes.substr(0, 8);
  out.append(reinterpret_cast<const char*>(&format), 4);
  if (!maker.empty()) out += std::string(1, static_cast<char>(maker.size())) + maker;
  return out + rest;
}

// A folded recording (record --max-size) outlives the build that made it: a
// later pageblame reads it (there is no trace to replay again) and says
// which build made it, the answers as they were; from an earlier format too
// (4, before the header named its maker). A format this build does not read
// is refused, naming it and the maker. An index of a trace made by another
// build is stale instead (the trace is replayed).
TEST(RecordingIndexTest, AFoldedRecordingMadeByAnotherBuildAnswersAndSaysWhich) {
  TempDir dir;
  replay::LoadOptions whole = TraceLoadOptions("rules-record.data");
  whole.preload_symbols = false;
  auto loaded = replay::LoadTrace(whole);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const std::string trace = dir.path() + "/t.data";
  replay::LoadOptions o;
  o.path = trace;
  o.folded = true;
  auto id = replay::RecordingFile::Identity::Of(o);
  ASSERT_TRUE(id.ok()) << id.status();
  const std::string bytes = replay::RecordingFile::Encode(replay::LoadedView::Of(**loaded), *id, 0, nullptr);
  ASSERT_EQ(bytes.substr(13, ThisBuild().size()), ThisBuild()) << "the header names its maker after the format";
  const auto answer = [&](const std::string& index) {
    Spit(trace + ".index", index);
    EXPECT_EQ(::chmod((trace + ".index").c_str(), 0600), 0);
    return Pageblame(absl::StrCat("maps -i ", trace));
  };
  const CliRun own = answer(bytes);
  ASSERT_EQ(own.exit_code, 0) << own.err;
  EXPECT_THAT(own.err, Not(HasSubstr("folded by")));
  EXPECT_THAT(own.out, HasSubstr("0x"));

  const std::string older = "pageblame 0.3.9 (git 1a2b3c4)";
  const CliRun other = answer(WithHeader(bytes, 5, older, true));
  EXPECT_EQ(other.exit_code, 0) << other.err;
  EXPECT_EQ(other.out, own.out);
  EXPECT_THAT(other.err, HasSubstr("warning: this recording was folded by " + older + ", read by " + ThisBuild() +
                                   ": its calls and stacks are as that build replayed them"));
  const CliRun format4 = answer(WithHeader(bytes, 4, "", true));
  EXPECT_EQ(format4.exit_code, 0) << format4.err;
  EXPECT_EQ(format4.out, own.out);
  EXPECT_THAT(format4.err, HasSubstr("folded by an earlier pageblame (index format 4), read by " + ThisBuild()));

  const CliRun format3 = answer(WithHeader(bytes, 3, "", true));
  EXPECT_EQ(format3.exit_code, 1) << format3.err;
  EXPECT_EQ(format3.out, "");
  EXPECT_THAT(format3.err, HasSubstr("t.data.index: stale: index format 3; this build (" + ThisBuild() +
                                     ") reads formats 4 to 5"));
  EXPECT_THAT(format3.err, HasSubstr("read it with the pageblame that made it"));
  const CliRun later = answer(WithHeader(bytes, 6, "pageblame 0.9.0 (git 7e8f9a0)", true));
  EXPECT_EQ(later.exit_code, 1) << later.err;
  EXPECT_THAT(later.err, HasSubstr("made by pageblame 0.9.0 (git 7e8f9a0) with index format 6; this build"));

  // An index of a trace: another build's is stale, whatever its format.
  auto trace_id = replay::RecordingFile::Identity::Of(whole);
  ASSERT_TRUE(trace_id.ok()) << trace_id.status();
  const std::string of_trace = replay::RecordingFile::Encode(**loaded, *trace_id);
  ASSERT_TRUE(replay::RecordingFile::Decode(of_trace, "index", *trace_id, whole.symbols).ok());
  auto stale = replay::RecordingFile::Decode(WithHeader(of_trace, 5, ThisBuild(), true), "index", *trace_id,
                                             whole.symbols);
  EXPECT_EQ(stale.status().code(), absl::StatusCode::kFailedPrecondition) << stale.status();
  EXPECT_THAT(std::string(stale.status().message()), HasSubstr("stale: made by another build of pageblame"));
  stale = replay::RecordingFile::Decode(WithHeader(of_trace, 4, "", false), "index", *trace_id, whole.symbols);
  EXPECT_THAT(std::string(stale.status().message()), HasSubstr("stale: index format 4; this build"));
}

// traces/folded/ (traces/make-folded.sh): what `record --max-size` left of
// 15 s of traces/src/rotate.c, folded and thinned in memory by a build of
// an earlier commit — an index made by another build, of a format this one
// reads. It must still answer: `maps` is the kernel's at the end, `query`
// names the function that made each block the program kept (its first
// second's too), and stderr names the build that made it. A change of the
// index's layout without a new format version fails here.
TEST(RecordingIndexTest, ABundledFoldedRecordingOfAnEarlierBuildStillAnswers) {
  TempDir dir;
  std::string maps_file, truth_file;
  uint32_t pid = 0;
  for (const auto& e : std::filesystem::directory_iterator(TracePath("folded"))) {
    const std::string name = e.path().filename();
    std::filesystem::copy_file(e.path(), dir.path() + "/" + name);
    if (absl::StartsWith(name, "rotate.data.")) {
      ASSERT_EQ(::chmod((dir.path() + "/" + name).c_str(), 0600), 0);
    }
    if (absl::EndsWith(name, ".maps")) {
      maps_file = e.path();
      ASSERT_TRUE(absl::SimpleAtoi(name.substr(7, name.size() - 12), &pid)) << name;
    }
    if (absl::EndsWith(name, ".tsv")) truth_file = e.path();
  }
  ASSERT_NE(pid, 0u);
  // perf recorded the program as the checkout's traces/bin/rotate.
  const std::string exe = "/work/main/traces/bin/rotate";
  const std::string symfs = MakeSymfs("folded-symfs", {exe});
  const std::string common = absl::StrCat(" -i ", dir.path(), "/rotate.data --pid ", pid, " --symfs ", symfs);
  // Which build made it, as this build reads the header ("" while the
  // replay's code is still that build's, as on the commit that made it).
  replay::LoadOptions o;
  o.path = dir.path() + "/rotate.data";
  o.folded = true;
  o.symbols.symfs = symfs;
  auto id = replay::RecordingFile::Identity::Of(o);
  ASSERT_TRUE(id.ok()) << id.status();
  auto decoded = replay::RecordingFile::Decode(Slurp(o.path + ".index"), "index", *id, o.symbols);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const std::string made_by = (*decoded)->made_by();

  CliRun maps = Pageblame("maps --json" + common);
  ASSERT_EQ(maps.exit_code, 0) << maps.err;
  if (!made_by.empty()) {
    EXPECT_THAT(made_by, ::testing::StartsWith("pageblame "));
    EXPECT_THAT(maps.err, HasSubstr("warning: this recording was folded by " + made_by + ", read by " + ThisBuild()));
  }
  EXPECT_THAT(maps.err, HasSubstr("record --max-size thinned this recording's history at"));
  PageSet created;
  for (const auto& r : nlohmann::json::parse(maps.out)) {
    if (r["origin"].is_null()) continue;
    created.Add(std::stoull(r["start"].get<std::string>(), nullptr, 16),
                std::stoull(r["end"].get<std::string>(), nullptr, 16));
  }
  const PageSet expected = ProcessMadePages(ReadMapsFile(maps_file), exe);
  EXPECT_TRUE(created == expected) << "created but not in maps:" << created.Minus(expected).Describe()
                                   << "\nin maps but not created:" << expected.Minus(created).Describe();
  const std::vector<TruthRow> truth = ReadTruth(truth_file);
  ASSERT_EQ(truth.size(), 4u);
  for (const TruthRow& row : truth) {
    SCOPED_TRACE(row.origin);
    CliRun q = Pageblame(absl::StrCat("query", common, " 0x", absl::Hex(row.start)));
    ASSERT_EQ(q.exit_code, 0) << q.err;
    EXPECT_THAT(q.out, HasSubstr(row.origin));
  }
}

}  // namespace
}  // namespace pageblame::testing

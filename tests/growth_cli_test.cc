// `pageblame growth` as users run it, on phases-fp.data (traces/src/phases.c):
// the contract's JSON, the text and folded forms, usage and output errors;
// and the pprof files of growth, attribute and maps read back with
// `go tool pprof`, which must show the same stacks and bytes as their JSON.
#include <sys/stat.h>

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli_runner.h"
#include "tests/tool_runner.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;

constexpr uint64_t kMiB = 1 << 20;
constexpr char kGo[] = "/usr/bin/go";

const ManifestRow& PhasesRow() {
  static const ManifestRow row = [] {
    for (const ManifestRow& r : ReadManifest()) {
      if (r["trace"] == "phases-fp.data") return r;
    }
    ADD_FAILURE() << "no phases-fp.data row";
    std::abort();
  }();
  return row;
}

std::string Trace() {
  return "-i " + TracePath("phases-fp.data") + " --buildid-dir " + SourceDir() + "/traces/buildid-cache --pid " +
         PhasesRow()["pid"];
}

Json RunJson(const std::string& args) {
  CliRun r = Pageblame(args);
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
  if (r.exit_code != 0) return Json();
  return Json::parse(r.out);
}

// The creating call's time of the region at `addr` (query --json).
double OriginTime(const std::string& addr) {
  Json j = RunJson("query --json " + Trace() + " " + addr);
  return j.at(0).at("origin").at("time").get<double>();
}

// A moment between phases.c's two phases (it sleeps 200 ms between them).
std::string Gap() {
  static const std::string gap = [] {
    const double phase1_end = OriginTime("0x400040000000"), phase2_start = OriginTime("0x4000a0000000");
    EXPECT_GT(phase2_start - phase1_end, 0.15);
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.6f", (phase1_end + phase2_start) / 2);
    return std::string(buf);
  }();
  return gap;
}

std::string Leaf(const Json& origin) {
  if (origin.is_null() || origin["stack"].empty() || origin["stack"][0]["symbol"].is_null()) return "";
  return origin["stack"][0]["symbol"].get<std::string>();
}

uint64_t MapsBytes(const std::string& at) {
  uint64_t n = 0;
  for (const Json& r : RunJson("maps --json " + Trace() + (at.empty() ? "" : " --at " + at))) {
    n += std::stoull(r["end"].get<std::string>(), nullptr, 16) - std::stoull(r["start"].get<std::string>(), nullptr, 16);
  }
  return n;
}

std::set<std::string> Keys(const Json& j) {
  std::set<std::string> out;
  for (const auto& [k, v] : j.items()) out.insert(k);
  return out;
}

TEST(GrowthCliTest, JsonNamesTheSecondPhaseWithExactlyItsBytesAndAddsUpToMaps) {
  Json j = RunJson("growth --json --by create " + Trace() + " --from " + Gap() + " --to end");
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(Keys(j), (std::set<std::string>{"from", "to", "total", "before_trace", "stacks", "methods", "notes"}));
  EXPECT_EQ(j["notes"], Json::array()) << "no snapshots: nothing to say about them";
  const std::set<std::string> bytes_keys = {"from_bytes", "to_bytes", "growth_bytes", "from_committed_bytes",
                                            "to_committed_bytes", "growth_committed_bytes", "from_regions",
                                            "regions", "from_rss", "to_rss", "growth_rss"};
  EXPECT_EQ(Keys(j["total"]), bytes_keys);
  // No residency snapshots: resident bytes unknown (null), never 0.
  EXPECT_TRUE(j["total"]["to_rss"].is_null());
  EXPECT_TRUE(j["total"]["growth_rss"].is_null());
  EXPECT_EQ(Keys(j["before_trace"]), bytes_keys);
  std::set<std::string> stack_keys = bytes_keys;
  stack_keys.insert({"added_bytes", "removed_bytes", "made_gone_bytes", "calls", "kind", "origin"});
  ASSERT_FALSE(j["stacks"].empty());
  for (const Json& s : j["stacks"]) EXPECT_EQ(Keys(s), stack_keys);

  const Json& top = j["stacks"][0];
  EXPECT_EQ(Leaf(top["origin"]), "grow_cache");
  EXPECT_EQ(top["growth_bytes"], 6 * kMiB);
  EXPECT_EQ(top["from_bytes"], 0);
  EXPECT_EQ(top["to_bytes"], 6 * kMiB);
  EXPECT_EQ(top["growth_committed_bytes"], 6 * kMiB);
  // The scratch MiB, mapped and unmapped again, from grow_cache's other call site.
  uint64_t made_gone = 0;
  for (const Json& s : j["stacks"]) {
    if (Leaf(s["origin"]) == "grow_cache") made_gone += s["made_gone_bytes"].get<uint64_t>();
  }
  EXPECT_EQ(made_gone, kMiB);
  EXPECT_EQ(top["regions"], 3);
  EXPECT_EQ(j["total"]["growth_bytes"], 5 * kMiB);
  EXPECT_EQ(j["total"]["from_bytes"].get<uint64_t>(), MapsBytes(Gap()));
  EXPECT_EQ(j["total"]["to_bytes"].get<uint64_t>(), MapsBytes(""));
  uint64_t from = j["before_trace"]["from_bytes"], to = j["before_trace"]["to_bytes"];
  for (const Json& s : j["stacks"]) {
    from += s["from_bytes"].get<uint64_t>();
    to += s["to_bytes"].get<uint64_t>();
    EXPECT_EQ(s["growth_bytes"].get<int64_t>(), s["added_bytes"].get<int64_t>() - s["removed_bytes"].get<int64_t>());
  }
  EXPECT_EQ(from, j["total"]["from_bytes"].get<uint64_t>());
  EXPECT_EQ(to, j["total"]["to_bytes"].get<uint64_t>());
  EXPECT_NEAR(j["from"].get<double>(), std::stod(Gap()), 1e-6);
}

// The default credits the committing call (--by commit).
TEST(GrowthCliTest, ByCommitNamesTheCommittingFunction) {
  Json j = RunJson("growth --json " + Trace() + " --from " + Gap());
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j, RunJson("growth --json --by commit " + Trace() + " --from " + Gap()));
  std::map<std::string, int64_t> growth;
  for (const Json& s : j["stacks"]) {
    ASSERT_TRUE(s.contains("commit") && !s.contains("origin"));
    growth[Leaf(s["commit"])] = s["growth_bytes"];
  }
  EXPECT_EQ(growth["commit_arena"], int64_t(kMiB));
  EXPECT_EQ(growth["reserve_arena"], -int64_t(kMiB));
}

// One-line stacks are the application's frames (analysis/app_frames.h);
// --frames all gives the innermost frames whatever they are.
TEST(GrowthCliTest, OneLineStacksAreTheApplicationsFramesUnlessAll) {
  for (const char* command : {"growth --group stack", "maps"}) {
    SCOPED_TRACE(command);
    CliRun app = Pageblame(std::string(command) + " " + Trace());
    ASSERT_EQ(app.exit_code, 0) << app.err;
    EXPECT_THAT(app.out, HasSubstr("grow_cache <- main"));
    EXPECT_THAT(app.out, Not(HasSubstr("<- __libc_start_call_main")));
    CliRun all = Pageblame(std::string(command) + " --frames all " + Trace());
    ASSERT_EQ(all.exit_code, 0) << all.err;
    EXPECT_THAT(all.out, HasSubstr("grow_cache <- main <- __libc_start_call_main"));
    CliRun bad = Pageblame(std::string(command) + " --frames most " + Trace());
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_THAT(bad.err, HasSubstr("bad --frames 'most': expected app or all"));
  }
}

// JSON keeps every frame and says where the application's begin.
TEST(GrowthCliTest, JsonMarksTheFirstAppFrame) {
  CliRun run = Pageblame("maps --json " + Trace());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Json maps = Json::parse(run.out);
  int named = 0;
  for (const Json& region : maps) {
    if (region["origin"].is_null()) continue;
    const Json& origin = region["origin"];
    ASSERT_TRUE(origin.contains("first_app_frame")) << origin.dump();
    if (origin["first_app_frame"].is_null()) continue;
    const size_t i = origin["first_app_frame"].get<size_t>();
    ASSERT_LT(i, origin["stack"].size());
    const Json& frame = origin["stack"][i];
    if (frame["symbol"] == "grow_cache" || frame["symbol"] == "warm_up" || frame["symbol"] == "reserve_arena") ++named;
    // Every frame before it is the runtime's (phases-fp: libc's) or unnamed.
    for (size_t k = 0; k < i; ++k) {
      const Json& f = origin["stack"][k];
      EXPECT_TRUE(f["symbol"].is_null() || absl::StrContains(f["dso"].get<std::string>(), "libc.so")) << f.dump();
    }
  }
  EXPECT_GT(named, 3);
}

TEST(GrowthCliTest, TextAndFoldedNameTheSameStacks) {
  CliRun t = Pageblame("growth --group stack " + Trace() + " --from " + Gap());
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_THAT(t.out, HasSubstr("mapped "));
  EXPECT_THAT(t.out, HasSubstr("(+5.0 MiB)"));
  // The first screen: the header, the table's head, then the stack that
  // grew the most, with its committed growth and app frames.
  const std::vector<std::string> lines = absl::StrSplit(t.out, '\n');
  ASSERT_GT(lines.size(), 5u);
  EXPECT_EQ(lines[3], "stacks by committed growth:");
  EXPECT_THAT(lines[5], ::testing::StartsWith("  1   +6.0 MiB"));
  EXPECT_THAT(lines[5], ::testing::EndsWith("  anon   grow_cache <- main"));

  CliRun f = Pageblame("growth --format folded " + Trace() + " --from " + Gap());
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_THAT(f.out, HasSubstr(";main;grow_cache 0 6291456\n"));
  EXPECT_THAT(f.out, HasSubstr(";main;warm_up 4194304 3145728\n"));
}

TEST(GrowthCliTest, OmittedEndsAreTheTracesStartAndEnd) {
  Json j = RunJson("growth --json " + Trace());
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["total"]["to_bytes"].get<uint64_t>(), MapsBytes(""));
  for (const Json& s : j["stacks"]) EXPECT_EQ(s["from_bytes"], 0) << "nothing was made before the first event";
  EXPECT_EQ(j["total"]["from_bytes"], j["before_trace"]["from_bytes"]);
}

TEST(GrowthCliTest, BadRangesAreUsageErrorsAndBadOutputsNameTheFile) {
  CliRun r = Pageblame("growth " + Trace() + " --from -0 --to +0");
  ExpectOneLineError(r, "is after --to");
  EXPECT_EQ(r.exit_code, 2);
  r = Pageblame("growth " + Trace() + " --from 1.5");
  ExpectOneLineError(r, "outside the trace");
  EXPECT_EQ(r.exit_code, 2);
  r = Pageblame("growth " + Trace() + " --to 99999999");
  ExpectOneLineError(r, "outside the trace");
  EXPECT_EQ(r.exit_code, 2);
  r = Pageblame("growth " + Trace() + " --from yesterday");
  ExpectOneLineError(r, "--from");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(Pageblame("growth " + Trace() + " --at end").exit_code, 2) << "a range, not a moment";
  EXPECT_EQ(Pageblame("growth " + Trace() + " --format svg").exit_code, 2);

  r = Pageblame("growth " + Trace() + " -o /nonexistent-dir/growth.json");
  ExpectOneLineError(r, "/nonexistent-dir/growth.json");
  EXPECT_EQ(r.exit_code, 1);
  const std::string dir = ScratchPath("a-directory");
  mkdir(dir.c_str(), 0755);
  r = Pageblame("growth --format pprof " + Trace() + " -o " + dir);
  ExpectOneLineError(r, dir);
  EXPECT_EQ(r.exit_code, 1);
  // A failed run leaves no file behind.
  const std::string out = ScratchPath("never-written.json");
  EXPECT_EQ(Pageblame("growth " + Trace() + " --from 1.5 -o " + out).exit_code, 2);
  struct stat st;
  EXPECT_NE(stat(out.c_str(), &st), 0) << out << " was left behind";
}

TEST(GrowthCliTest, AttributeAndMapsWriteToOutputFilesToo) {
  const std::string out = ScratchPath("attribute.json");
  CliRun r = Pageblame("attribute --json " + Trace() + " --regions " + TracePath(PhasesRow()["maps"]) + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  std::ifstream f(out);
  Json j = Json::parse(f);
  EXPECT_FALSE(j["stacks"].empty());
  r = Pageblame("maps " + Trace() + " -o /nonexistent-dir/maps.txt");
  ExpectOneLineError(r, "/nonexistent-dir/maps.txt");
  EXPECT_EQ(r.exit_code, 1);
}

// ---- pprof, read back with go tool pprof

// `go tool pprof -traces` of a profile: each sample as its value and its
// frames (leaf first), for sample type `type`.
struct PprofSample {
  int64_t value;
  std::vector<std::string> frames;
};
std::string GoPprof(const std::string& args) {
  // No symbolization (the names are in the file) and no home directory
  // needed: pprof only reads the file. -unit=B: bytes as plain numbers
  // ("6291456B"), not scaled ("6MB").
  CliRun r = Shell(absl::StrCat("HOME=", ::testing::TempDir(), " PPROF_TMPDIR=", ::testing::TempDir(), " ", kGo,
                                " tool pprof -symbolize=none -unit=B ", args));
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
  return r.out;
}

// "6291456B" or "-1048576B" -> the number; false for anything else.
bool PprofBytes(std::string text, int64_t* v) {
  if (text == "0") return *v = 0, true;
  if (text.empty() || text.back() != 'B') return false;
  text.pop_back();
  return absl::SimpleAtoi(text, v);
}

std::vector<PprofSample> PprofTraces(const std::string& file, const std::string& type,
                                     int* inline_lines_out = nullptr) {
  int inline_lines = 0;
  // Blocks separated by "-----------+----..." lines; in a block, label lines
  // ("      prot:  rw-"), then "  6291456B   grow_cache" (the value and the
  // leaf frame), then one frame per line.
  std::vector<PprofSample> out;
  std::vector<std::string> lines = absl::StrSplit(GoPprof("-traces -sample_index=" + type + " " + file), '\n');
  PprofSample cur{0, {}};
  bool in_block = false;
  for (const std::string& line : lines) {
    if (absl::StartsWith(line, "-----------+")) {
      if (in_block && !cur.frames.empty()) out.push_back(cur);
      cur = {0, {}};
      in_block = true;
      continue;
    }
    std::vector<std::string> parts = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (!in_block || parts.empty()) continue;
    if (cur.frames.empty()) {
      if (absl::EndsWith(parts[0], ":")) continue;  // a label
      EXPECT_TRUE(PprofBytes(parts[0], &cur.value) && parts.size() >= 2) << line;
      parts.erase(parts.begin());
    }
    std::string frame = absl::StrJoin(parts, " ");
    // A line inlined into the location's next one: "inline_big_buffer (inline)".
    if (absl::EndsWith(frame, " (inline)")) {
      frame.resize(frame.size() - std::string(" (inline)").size());
      ++inline_lines;
    }
    cur.frames.push_back(frame);
  }
  if (in_block && !cur.frames.empty()) out.push_back(cur);
  if (inline_lines_out != nullptr) *inline_lines_out = inline_lines;
  return out;
}

// `go tool pprof -top`: each function's flat value (its bytes as a leaf),
// every node shown.
std::map<std::string, int64_t> PprofTop(const std::string& file, const std::string& type) {
  std::map<std::string, int64_t> out;
  const std::vector<std::string> lines =
      absl::StrSplit(GoPprof("-top -nodecount=100000 -nodefraction=0 -sample_index=" + type + " " + file), '\n');
  for (const std::string& line : lines) {
    // "  6291456B 36.96% 36.96%   6291456B 36.96%  grow_cache"
    std::vector<std::string> parts = absl::StrSplit(line, ' ', absl::SkipEmpty());
    int64_t flat = 0;
    if (parts.size() < 6 || !absl::EndsWith(parts[1], "%")) continue;
    if (!PprofBytes(parts[0], &flat)) continue;
    if (flat != 0) out[absl::StrJoin(parts.begin() + 5, parts.end(), " ")] = flat;
  }
  return out;
}

// The leaves of "leaf;caller;..." -> bytes, as PprofTop shows them.
std::map<std::string, int64_t> Leaves(const std::map<std::string, int64_t>& stacks) {
  std::map<std::string, int64_t> out;
  for (const auto& [frames, bytes] : stacks) out[frames.substr(0, frames.find(';'))] += bytes;
  for (auto it = out.begin(); it != out.end();) it = it->second == 0 ? out.erase(it) : std::next(it);
  return out;
}

// The JSON's stacks as "leaf;caller;..." -> bytes (symbols, or "<unknown>"
// where there is none, as pprof prints an unsymbolized location).
std::map<std::string, int64_t> JsonStacks(const Json& stacks, const std::string& key, const std::string& field) {
  std::map<std::string, int64_t> out;
  for (const Json& s : stacks) {
    std::vector<std::string> names;
    for (const Json& f : s[key]["stack"]) {
      names.push_back(f["symbol"].is_null() ? "<unknown>" : f["symbol"].get<std::string>());
    }
    if (names.empty()) names.push_back("[no user stack]");
    out[absl::StrJoin(names, ";")] += s[field].get<int64_t>();
  }
  return out;
}

std::map<std::string, int64_t> PprofStacks(const std::vector<PprofSample>& samples) {
  std::map<std::string, int64_t> out;
  for (const PprofSample& s : samples) out[absl::StrJoin(s.frames, ";")] += s.value;
  // -traces shows samples whose value is 0 for this type; the JSON side
  // leaves them out.
  for (auto it = out.begin(); it != out.end();) it = it->second == 0 ? out.erase(it) : std::next(it);
  return out;
}

TEST(PprofTest, GrowthProfileHasTheStacksAndBytesOfTheJson) {
  PB_REQUIRE_TOOL(kGo);
  const std::string file = ScratchPath("growth.pb.gz");
  CliRun r = Pageblame("growth --format pprof --by create " + Trace() + " --from " + Gap() + " -o " + file);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = RunJson("growth --json --by create " + Trace() + " --from " + Gap());
  std::map<std::string, int64_t> want = JsonStacks(j["stacks"], "origin", "growth_bytes");
  if (j["before_trace"]["growth_bytes"] != 0) want["[before trace]"] = j["before_trace"]["growth_bytes"];
  std::map<std::string, int64_t> got = PprofStacks(PprofTraces(file, "mapped_growth"));
  // pprof leaves out samples whose value is 0.
  for (auto it = want.begin(); it != want.end();) it = it->second == 0 ? want.erase(it) : std::next(it);
  EXPECT_EQ(got, want);
  EXPECT_EQ(got.at("grow_cache;main;__libc_start_call_main"), int64_t(6 * kMiB));

  std::map<std::string, int64_t> to = JsonStacks(j["stacks"], "origin", "to_bytes");
  to["[before trace]"] = j["before_trace"]["to_bytes"];
  for (auto it = to.begin(); it != to.end();) it = it->second == 0 ? to.erase(it) : std::next(it);
  EXPECT_EQ(PprofStacks(PprofTraces(file, "mapped_to")), to);

  // -top: each leaf function's flat bytes, as the JSON's stacks sum them.
  EXPECT_EQ(PprofTop(file, "mapped_growth"), Leaves(want));
  EXPECT_EQ(PprofTop(file, "mapped_to"), Leaves(to));
  EXPECT_EQ(PprofTop(file, "mapped_growth").at("grow_cache"), int64_t(6 * kMiB));
}

TEST(PprofTest, MappingsCarryTheTracesBuildIds) {
  PB_REQUIRE_TOOL(kGo);
  const std::string file = ScratchPath("maps.pb.gz");
  CliRun r = Pageblame("maps --format pprof " + Trace() + " -o " + file);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string raw = GoPprof("-raw " + file);
  // perf buildid-list -i traces/phases-fp.data: the program's own build id.
  CliRun ids = Shell("perf buildid-list -i " + TracePath("phases-fp.data") + " 2>/dev/null || true");
  std::string phases_id;
  for (absl::string_view line : absl::StrSplit(ids.out, '\n')) {
    if (absl::EndsWith(line, "/traces/bin/phases")) phases_id = std::string(line.substr(0, line.find(' ')));
  }
  EXPECT_FALSE(phases_id.empty()) << "perf buildid-list names no traces/bin/phases:\n" << ids.out;
  if (!phases_id.empty()) {
    EXPECT_THAT(raw, HasSubstr(phases_id));
  }
  EXPECT_THAT(raw, HasSubstr("/traces/bin/phases"));
  EXPECT_THAT(raw, HasSubstr("libc.so.6"));
}

TEST(PprofTest, MapsAndAttributeProfilesHaveTheBytesOfTheirJson) {
  PB_REQUIRE_TOOL(kGo);
  // maps: by creating stack; regions from before the trace under [before trace].
  const std::string maps_file = ScratchPath("maps2.pb.gz");
  ASSERT_EQ(Pageblame("maps --format pprof " + Trace() + " -o " + maps_file).exit_code, 0);
  std::map<std::string, int64_t> want;
  int64_t total = 0;
  for (const Json& r : RunJson("maps --json " + Trace())) {
    const int64_t size = int64_t(std::stoull(r["end"].get<std::string>(), nullptr, 16) -
                                 std::stoull(r["start"].get<std::string>(), nullptr, 16));
    total += size;
    if (r["origin"].is_null()) continue;
    Json one = Json::array({Json{{"origin", r["origin"]}, {"bytes", size}}});
    for (const auto& [k, v] : JsonStacks(one, "origin", "bytes")) want[k] += v;
  }
  std::map<std::string, int64_t> got;
  int64_t got_total = 0;
  for (const PprofSample& s : PprofTraces(maps_file, "mapped")) {
    got_total += s.value;
    if (s.frames.back() == "[before trace]") continue;
    got[absl::StrJoin(s.frames, ";")] += s.value;
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(got_total, total);

  // attribute: its JSON's stacks, plus [before trace] and [not mapped].
  const std::string attr_file = ScratchPath("attribute.pb.gz");
  const std::string regions = " --regions " + TracePath(PhasesRow()["maps"]);
  ASSERT_EQ(Pageblame("attribute --format pprof --by create " + Trace() + regions + " -o " + attr_file).exit_code, 0);
  Json a = RunJson("attribute --json --by create " + Trace() + regions);
  std::map<std::string, int64_t> a_want = JsonStacks(a["stacks"], "origin", "bytes");
  int64_t before = 0, unmapped = 0;
  for (const Json& reg : a["regions"]) {
    before += reg["before_trace_bytes"].get<int64_t>();
    unmapped += reg["unmapped_bytes"].get<int64_t>();
  }
  if (before) a_want["[before trace]"] = before;
  if (unmapped) a_want["[not mapped]"] = unmapped;
  EXPECT_EQ(PprofStacks(PprofTraces(attr_file, "mapped")), a_want);
  EXPECT_EQ(PprofTop(attr_file, "mapped"), Leaves(a_want));

  // Each stack's sample has the label "method", the text's row (issue 41):
  // `-tags` totals each method's samples to its JSON bytes.
  std::map<std::string, int64_t> methods_want, methods_got;
  for (const Json& m : a["methods"]) methods_want[m["method"]] += m["bytes"].get<int64_t>();
  bool in_method = false;
  for (absl::string_view line : absl::StrSplit(GoPprof("-tags -sample_index=mapped " + attr_file), '\n')) {
    if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), "method:")) {
      in_method = true;
      continue;
    }
    const size_t colon = line.find("): ");
    if (!in_method || colon == absl::string_view::npos) continue;
    double bytes = 0;
    ASSERT_TRUE(absl::SimpleAtod(line.substr(0, line.find('B')), &bytes)) << line;
    methods_got[std::string(line.substr(colon + 3))] += static_cast<int64_t>(bytes);
  }
  EXPECT_EQ(methods_got, methods_want);
}

// --kind keeps the profile's regions to those kinds, as it keeps the JSON's.
TEST(PprofTest, MapsProfileOfAKindHasTheBytesOfThatKindsJson) {
  PB_REQUIRE_TOOL(kGo);
  for (const std::string kind : {"anon", "image"}) {
    const std::string file = ScratchPath("maps-" + kind + ".pb.gz");
    ASSERT_EQ(Pageblame("maps --format pprof --kind " + kind + " " + Trace() + " -o " + file).exit_code, 0);
    int64_t want = 0;
    for (const Json& r : RunJson("maps --json --kind " + kind + " " + Trace())) {
      EXPECT_EQ(r["kind"], kind);
      want += int64_t(std::stoull(r["end"].get<std::string>(), nullptr, 16) -
                      std::stoull(r["start"].get<std::string>(), nullptr, 16));
    }
    int64_t got = 0;
    for (const PprofSample& s : PprofTraces(file, "mapped")) got += s.value;
    EXPECT_GT(want, 0) << kind;
    EXPECT_EQ(got, want) << kind;
  }
}

TEST(PprofTest, InlinedFramesAreLinesOfTheirLocation) {
  PB_REQUIRE_TOOL(kGo);
  // alloc-dwarf.data (traces/src/alloc.c): make_inline_buffer's malloc is in
  // the always_inline inline_big_buffer; DWARF-unwound stacks show both.
  std::string pid;
  for (const ManifestRow& r : ReadManifest()) {
    if (r["trace"] == "alloc-dwarf.data" && r["role"] == "main") pid = r["pid"];
  }
  ASSERT_FALSE(pid.empty());
  const std::string args = "-i " + TracePath("alloc-dwarf.data") + " --buildid-dir " + SourceDir() +
                           "/traces/buildid-cache --pid " + pid;
  const std::string file = ScratchPath("alloc-maps.pb.gz");
  ASSERT_EQ(Pageblame("maps --format pprof " + args + " -o " + file).exit_code, 0);
  std::map<std::string, int64_t> want;
  for (const Json& r : RunJson("maps --json " + args)) {
    if (r["origin"].is_null()) continue;
    Json one = Json::array({Json{{"origin", r["origin"]},
                                 {"bytes", int64_t(std::stoull(r["end"].get<std::string>(), nullptr, 16) -
                                                   std::stoull(r["start"].get<std::string>(), nullptr, 16))}}});
    for (const auto& [k, v] : JsonStacks(one, "origin", "bytes")) want[k] += v;
  }
  std::map<std::string, int64_t> got;
  int inline_lines = 0;
  for (const PprofSample& s : PprofTraces(file, "mapped", &inline_lines)) {
    if (s.frames.back() != "[before trace]") got[absl::StrJoin(s.frames, ";")] += s.value;
  }
  EXPECT_EQ(got, want);
  EXPECT_GT(inline_lines, 0);
  bool inlined = false;
  for (const auto& [frames, bytes] : got) inlined |= absl::StrContains(frames, "inline_big_buffer;make_inline_buffer");
  EXPECT_TRUE(inlined) << "no stack with inline_big_buffer inlined into make_inline_buffer";
  // -raw: one location holds both (a line each), not two locations.
  const std::string raw = GoPprof("-raw " + file);
  EXPECT_TRUE(std::regex_search(raw, std::regex(" inline_big_buffer[^\n]*\n +make_inline_buffer"))) << raw;
}

// --no-inline (perf's): the same stacks without their inlined frames, and
// no DWARF debug info read for them.
TEST(InlineTest, NoInlineLeavesOutTheInlinedFramesAlone) {
  const std::string args = "maps --json -i " + TracePath("alloc-dwarf.data") + " --buildid-dir " +
                           SourceDir() + "/traces/buildid-cache";
  const Json with = RunJson(args);
  const Json without = RunJson(args + " --no-inline");
  ASSERT_EQ(with.size(), without.size());
  size_t dropped = 0;
  for (size_t i = 0; i < with.size(); ++i) {
    if (with[i]["origin"].is_null()) continue;
    std::vector<std::string> kept, plain;
    for (const Json& f : with[i]["origin"]["stack"]) {
      if (f.value("inlined", false)) {
        ++dropped;
        continue;
      }
      kept.push_back(f.dump());
    }
    for (const Json& f : without[i]["origin"]["stack"]) {
      EXPECT_FALSE(f.contains("inlined")) << f.dump();
      plain.push_back(f.dump());
    }
    EXPECT_EQ(kept, plain) << with[i]["start"];
  }
  EXPECT_GT(dropped, 0u) << "alloc-dwarf.data has inline_big_buffer inlined into make_inline_buffer";
  CliRun v = Pageblame(args + " --no-inline -v");
  EXPECT_THAT(v.err, HasSubstr("0 inlined frames")) << v.err;
}

TEST(PprofTest, PprofNeedsAFileOrAPipe) {
  // Standard output here is a pipe: the binary profile may go there.
  CliRun r = Pageblame("maps --format pprof " + Trace());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ASSERT_GE(r.out.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(r.out[0]), 0x1f) << "gzip magic";
  EXPECT_EQ(static_cast<unsigned char>(r.out[1]), 0x8b);
}

}  // namespace
}  // namespace pageblame::testing

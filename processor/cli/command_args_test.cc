// Every command's argument handling through the command registry, run in
// this process: --help prints the command's help and exits 0; an unknown
// option, a likely typo ("did you mean"), a missing value and each
// command's own mistakes are usage errors (exit 2) in one line naming the
// option, found before any input is read (-i names a file that does not
// exist: reading it would be exit 1); record's mistakes are found before it
// looks for perf. And on a small bundled trace, the options given reach
// the answer (the process, moment, kinds and credit asked).
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/analysis/kind_classifier.h"
#include "processor/analysis/maps_answer.h"
#include "processor/base/format.h"
#include "processor/base/temp_dir_for_test.h"
#include "processor/cli/command_registry.h"
#include "processor/cli/usage.h"
#include "processor/render/origin_renderer.h"
#include "processor/session/selection.h"
#include "processor/session/session.h"
#include "processor/session/time_spec.h"

namespace pageblame::cli {
namespace {

using ::testing::HasSubstr;

struct Ran {
  int rc = -1;
  std::string out, err;
};

Ran RunCommand(const std::string& command, const std::vector<std::string>& argv) {
  const Command* c = FindCommand(command);
  EXPECT_NE(c, nullptr) << command;
  if (c == nullptr) return {};
  Ran r;
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  r.rc = RunGuarded([&] { return c->run(argv); });
  std::fflush(stdout);
  r.out = ::testing::internal::GetCapturedStdout();
  r.err = ::testing::internal::GetCapturedStderr();
  return r;
}

// A trace that is not there: a command that got as far as reading it
// would exit 1 saying so.
const std::vector<std::string> kNoTrace = {"-i", "/nonexistent/pb-args-test.data"};

std::vector<std::string> With(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The one line of a usage mistake.
std::string UsageLine(const std::string& command, const std::string& what) {
  return absl::StrCat("pageblame ", command, ": ", what, " (see 'pageblame ", command, " --help')\n");
}

TEST(CommandArgsTest, HelpPrintsTheCommandsHelpAndExitsZero) {
  for (const Command& c : AllCommands()) {
    SCOPED_TRACE(c.spec->name);
    for (const std::vector<std::string>& argv :
         {std::vector<std::string>{"--help"}, {"-h"}, {"-i", "x.data", "--bogus", "--help"}}) {
      const Ran r = RunCommand(c.spec->name, argv);
      EXPECT_EQ(r.rc, 0) << r.err;
      EXPECT_EQ(r.out, c.spec->help);
      EXPECT_EQ(r.err, "");
    }
  }
  // After "--" it is an argument, not a request for help.
  const Ran r = RunCommand("query", With(kNoTrace, {"--", "--help"}));
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.out, "");
}

TEST(CommandArgsTest, AnUnknownOptionIsAUsageErrorNamingIt) {
  for (const Command& c : AllCommands()) {
    SCOPED_TRACE(c.spec->name);
    const Ran r = RunCommand(c.spec->name, With(kNoTrace, {"--no-such-option"}));
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(r.out, "");
    const std::string name = c.spec->name;
    // -i is not every command's: then it is the unknown option named.
    const bool has_input = c.spec->aliases.count("-i") > 0;
    EXPECT_EQ(r.err, UsageLine(name, has_input ? "unknown option --no-such-option" : "unknown option -i")) << r.err;
  }
}

// Two neighbouring letters swapped, the commonest typo: every option of
// every command is suggested for its own.
TEST(CommandArgsTest, ATypoOfAnOptionSaysWhichWasMeant) {
  size_t tried = 0;
  for (const Command& c : AllCommands()) {
    for (const auto* flags : {&c.spec->value_flags, &c.spec->bool_flags}) {
      for (const std::string& flag : *flags) {
        if (flag.size() < 5) continue;  // "--at": a swap is as close to others
        std::string typo = flag;
        std::swap(typo[3], typo[4]);
        if (typo == flag) continue;
        SCOPED_TRACE(c.spec->name + " " + typo);
        const Ran r = RunCommand(c.spec->name, {typo});
        EXPECT_EQ(r.rc, 2);
        EXPECT_EQ(r.err, UsageLine(c.spec->name, absl::StrCat("unknown option ", typo, " (did you mean ", flag, "?)")));
        ++tried;
      }
    }
  }
  EXPECT_GT(tried, 50u);
}

TEST(CommandArgsTest, AValueFlagWithoutItsValueAndABoolFlagWithOneAreUsageErrors) {
  for (const Command& c : AllCommands()) {
    SCOPED_TRACE(c.spec->name);
    for (const std::string& flag : c.spec->value_flags) {
      const Ran r = RunCommand(c.spec->name, {flag});
      EXPECT_EQ(r.rc, 2) << flag;
      EXPECT_EQ(r.err, UsageLine(c.spec->name, flag + " needs a value"));
    }
    for (const auto& [alias, flag] : c.spec->aliases) {
      if (!c.spec->value_flags.count(flag)) continue;
      EXPECT_EQ(RunCommand(c.spec->name, {alias}).err, UsageLine(c.spec->name, flag + " needs a value")) << alias;
    }
    for (const std::string& flag : c.spec->bool_flags) {
      const Ran r = RunCommand(c.spec->name, {flag + "=yes"});
      EXPECT_EQ(r.rc, 2) << flag;
      EXPECT_EQ(r.err, UsageLine(c.spec->name, flag + " takes no value"));
    }
  }
}

struct Mistake {
  std::string command;
  std::vector<std::string> argv;
  std::string said;  // the whole stderr line, or
  std::vector<std::string> named = {};  // what it must name (the option, what was given)
};

// Each command's own mistakes, said before the trace is read.
TEST(CommandArgsTest, EachCommandsMistakesAreUsageErrorsBeforeAnyInputIsRead) {
  const std::vector<Mistake> mistakes = {
      {"maps", {"--format", "csv"}, UsageLine("maps", "bad --format 'csv': expected text, json or pprof")},
      {"maps", {"--format", "folded"}, UsageLine("maps", "bad --format 'folded': expected text, json or pprof")},
      {"maps", {"--json", "--format", "text"}, UsageLine("maps", "--json contradicts --format text")},
      {"maps", {"--frames", "some"}, UsageLine("maps", "bad --frames 'some': expected app or all")},
      {"maps", {"--pid", "x42"}, "pageblame: bad --pid 'x42': expected a number\n"},
      {"maps", {"--at", "yesterday"}, "", {"pageblame: bad --at 'yesterday'"}},
      {"maps", {"--no-rss", "--rss", "x.rss"}, "pageblame: --no-rss contradicts --rss\n"},
      {"query", {}, UsageLine("query", "no address given")},
      {"query", {"0xzz"}, "", {"pageblame query: ", "0xzz"}},
      {"attribute", {"--by", "owner"}, UsageLine("attribute", "bad --by 'owner': expected create or commit")},
      {"attribute", {}, UsageLine("attribute", "no regions: give --regions FILE or --address A --maddress M")},
      {"attribute", {"--regions", "t.txt", "--address", "a.txt"},
       UsageLine("attribute", "give either --regions or --address/--maddress, not both")},
      {"attribute", {"--address", "a.txt"}, UsageLine("attribute", "--address and --maddress go together")},
      {"attribute", {"--unaccounted", "--regions", "t.txt"},
       UsageLine("attribute", "--unaccounted takes the regions from the trace: not with --regions or --address")},
      {"attribute", {"--sort", "size"}, UsageLine("attribute", "bad --sort 'size': expected rss, committed or mapped")},
      {"attribute", {"--format", "pprof", "--json"}, UsageLine("attribute", "--json contradicts --format pprof")},
      {"attribute", {"--unaccounted", "--sort", "rss", "--no-rss"},
       "pageblame: --no-rss contradicts an answer in resident bytes\n"},
      {"growth", {"--from", "yesterday"}, UsageLine("growth",
                 "bad --from 'yesterday': expected seconds as perf script prints them (216.083882), +S after the "
                 "trace's start, -S before its end, 'end' or 'peak'")},
      {"growth", {"--by", "x"}, UsageLine("growth", "bad --by 'x': expected create or commit")},
      {"growth", {"--kind", "stack"}, "", {"pageblame growth: bad --kind: ", "stack"}},
      {"report", {}, UsageLine("report", "give the page to write with -o FILE.html")},
      {"report", {"-o", "r.html", "--frames", "x"}, UsageLine("report", "bad --frames 'x': expected app or all")},
      {"report", {"-o", "r.html", "--regions", "t.txt", "--unaccounted"},
       UsageLine("report", "--unaccounted takes the regions from the trace: not with --regions or --address")},
  };
  for (const Mistake& m : mistakes) {
    const std::vector<std::string> argv = With(kNoTrace, m.argv);
    SCOPED_TRACE(m.command + " " + absl::StrJoin(argv, " "));
    const Ran r = RunCommand(m.command, argv);
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_THAT(r.err, ::testing::Not(HasSubstr("nonexistent"))) << "the trace was read first";
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    if (!m.said.empty()) {
      EXPECT_EQ(r.err, m.said);
    }
    for (const std::string& n : m.named) EXPECT_THAT(r.err, HasSubstr(n));
  }
}

// Commands that take files as arguments: a wrong number of them.
TEST(CommandArgsTest, CommandsWithPositionalArgumentsCountThem) {
  EXPECT_EQ(RunCommand("diff", {"a.txt"}).err, UsageLine("diff", "missing arguments"));
  const Ran three = RunCommand("diff", {"a.txt", "b.txt", "c.txt"});
  EXPECT_EQ(three.rc, 2);
  EXPECT_EQ(three.err, UsageLine("diff", "unexpected argument 'c.txt'"));
  for (const std::string command : {"heap", "dotnet-regions"}) {
    SCOPED_TRACE(command);
    for (const std::vector<std::string>& argv : {std::vector<std::string>{}, {"core", "-p", "1"}, {"a", "b"}}) {
      const Ran r = RunCommand(command, argv);
      EXPECT_EQ(r.rc, 2);
      EXPECT_EQ(r.err, UsageLine(command, "give either a CORE file or -p PID"));
    }
    for (const std::string pid : {"x", "0", "-3"}) {
      const Ran r = RunCommand(command, {"-p", pid});
      EXPECT_EQ(r.rc, 2) << pid;
      EXPECT_EQ(r.err, UsageLine(command, "bad --pid '" + pid + "': expected a process id"));
    }
  }
  // A trace where an address should be: most likely a forgotten -i.
  TempDir dir("pb_cli_args");
  const std::string trace = dir.path() + "/t.data";
  std::FILE* f = std::fopen(trace.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  const Ran r = RunCommand("query", {trace});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, UsageLine("query", "'" + trace + "' is a file, not an address: did you mean -i " + trace + "?"));
}

// PATH without perf, for the length of a test.
class NoPerfInPath {
 public:
  NoPerfInPath() : old_(std::getenv("PATH") ? std::getenv("PATH") : "") { ::setenv("PATH", dir_.path().c_str(), 1); }
  ~NoPerfInPath() { ::setenv("PATH", old_.c_str(), 1); }

 private:
  TempDir dir_{"pb_no_perf"};
  std::string old_;
};

// record's own mistakes are said first, whether perf is there or not; a
// command line that is right and no perf is exit 1 with how to install it.
TEST(CommandArgsTest, RecordsMistakesComeBeforeLookingForPerf) {
  NoPerfInPath no_perf;
  const std::vector<Mistake> mistakes = {
      {"record", {}, UsageLine("record", "give either -p PID or a command to run (after --)")},
      {"record", {"-p", "1", "--", "/bin/true"}, UsageLine("record", "give either -p PID or a command to run (after --)")},
      {"record", {"-p", "one"}, UsageLine("record", "bad --pid 'one'")},
      {"record", {"--per-thread", "--", "/bin/true"}, UsageLine("record", "--per-thread goes with -p PID")},
      {"record", {"--call-graph", "lbr", "--", "/bin/true"},
       UsageLine("record", "bad --call-graph 'lbr': expected dwarf or fp")},
  };
  for (const Mistake& m : mistakes) {
    SCOPED_TRACE(absl::StrJoin(m.argv, " "));
    const Ran r = RunCommand(m.command, m.argv);
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(r.err, m.said);
  }
  for (const std::string every : {"0.001", "86401", "-1", "often"}) {
    const Ran r = RunCommand("record", {"--rss-every", every, "--", "/bin/true"});
    EXPECT_EQ(r.rc, 2) << every;
    EXPECT_EQ(r.err, UsageLine("record", "bad --rss-every '" + every +
                                             "': expected seconds (0.01 to 86400), or 0 for no snapshots"));
  }
  const Ran r = RunCommand("record", {"--dry-run", "--rss-every", "0", "--", "/bin/true"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_THAT(r.err, HasSubstr("pageblame: perf is not installed: on Debian/Ubuntu 'apt-get install linux-perf'"));
  EXPECT_EQ(r.out, "");
}

// The options reach the answer: a command run through the registry on
// phases-fp.data (phases.c, pid 6193) answers what the analysis answers for
// the same process, moment, kinds and credit.
std::string Source(const std::string& path) { return std::string(PAGEBLAME_SOURCE_DIR) + "/" + path; }
const std::vector<std::string> kPhases = {"-i", Source("traces/phases-fp.data"), "--buildid-dir",
                                          Source("traces/buildid-cache")};

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

struct Phases {
  std::unique_ptr<session::Session> session;
  uint64_t at = 0;  // +0.2: between phases.c's two phases
};

Phases OpenPhases() {
  Phases p;
  session::SessionOptions o;
  o.path = kPhases[1];
  o.symbols.debug_dir = kPhases[3];
  absl::StatusOr<std::unique_ptr<session::Session>> s = session::Session::Open(o);
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return p;
  p.session = *std::move(s);
  p.at = *session::ResolveMoment(*session::ParseTimeSpec("+0.2"), p.session->index(),
                                 p.session->index().ProcessesWithPid(6193), session::PeakOf::kMapped);
  return p;
}

TEST(CommandOptionsTest, MapsAndQueryAnswerForThePidMomentAndKindsAsked) {
  const Phases p = OpenPhases();
  ASSERT_NE(p.session, nullptr);
  const index::TraceIndex& idx = p.session->index();
  TempDir dir("pb_cli_args");
  const std::string out = dir.path() + "/maps.json";
  const Ran maps = RunCommand("maps", With(kPhases, {"--pid", "6193", "--at", "+0.2", "--kind", "anon", "--format",
                                                     "json", "-o", out}));
  ASSERT_EQ(maps.rc, 0) << maps.err;
  EXPECT_EQ(maps.out, "");
  const render::Json j = render::Json::parse(ReadFile(out));
  std::vector<std::string> starts;
  for (const render::Json& r : j) {
    EXPECT_EQ(r["kind"], "anon");
    EXPECT_EQ(r["pid"], 6193);
    starts.push_back(r["start"]);
  }
  analysis::KindClassifier kinds(p.session->frames());
  analysis::MapsQuery q;
  q.processes = idx.ProcessesWithPid(6193);
  q.at = p.at;
  q.kind_of = kinds.Function();
  q.kinds = {analysis::RegionKind::kAnon};
  std::vector<std::string> expected;
  const analysis::MapsAnswer answer = analysis::Maps(idx, q);  // kept: the loop reads into it
  ASSERT_FALSE(answer.processes.empty());
  for (const analysis::MapsRegion& r : answer.processes.at(0).regions) {
    expected.push_back(Hex(idx.version(r.version).start));
  }
  EXPECT_EQ(starts, expected);
  ASSERT_FALSE(starts.empty());
  // query: the first of those regions, at the same moment, to stdout.
  const uint64_t address = idx.version(answer.processes.at(0).regions.at(0).version).start + 4096 - 1;
  const Ran query = RunCommand("query", With(kPhases, {"--json", "--at", "+0.2", Hex(address)}));
  ASSERT_EQ(query.rc, 0) << query.err;
  const render::Json a = render::Json::parse(query.out);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0]["pid"], 6193);
  EXPECT_EQ(a[0]["region"]["start"], starts[0]);
}

TEST(CommandOptionsTest, GrowthAndAttributeCreditAsAskedAndAddUp) {
  const Phases p = OpenPhases();
  ASSERT_NE(p.session, nullptr);
  TempDir dir("pb_cli_args");
  for (const std::string by : {"create", "commit"}) {
    const std::string out = dir.path() + "/growth-" + by + ".json";
    const Ran r = RunCommand("growth", With(kPhases, {"--from", "+0.2", "--by", by, "--json", "-o", out}));
    ASSERT_EQ(r.rc, 0) << r.err;
    const render::Json g = render::Json::parse(ReadFile(out));
    EXPECT_EQ(g["from"], TimeSeconds(p.at)) << by;
    ASSERT_FALSE(g["stacks"].empty());
    EXPECT_TRUE(g["stacks"][0].contains(by == "create" ? "origin" : "commit")) << by;
  }
  // attribute of the kernel's maps at phases.c's end: every byte of the
  // table in the folded lines.
  const std::string table = Source("traces/maps/phases-fp.6193.maps");
  uint64_t bytes = 0;
  std::ifstream maps(table);
  for (std::string line; std::getline(maps, line);) {
    uint64_t start = 0, end = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%lx-%lx", &start, &end), 2) << line;
    bytes += end - start;
  }
  const std::string out = dir.path() + "/attribute.folded";
  const Ran r = RunCommand("attribute", With(kPhases, {"--pid", "6193", "--regions", table, "--format", "folded", "-o",
                                                       out}));
  ASSERT_EQ(r.rc, 0) << r.err;
  uint64_t folded = 0;
  std::istringstream lines(ReadFile(out));
  for (std::string line; std::getline(lines, line);) folded += std::stoull(line.substr(line.rfind(' ') + 1));
  EXPECT_EQ(folded, bytes);
}

}  // namespace
}  // namespace pageblame::cli

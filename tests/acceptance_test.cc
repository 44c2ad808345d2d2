// The foundation's acceptance test on real traces (traces/manifest.tsv):
// the pages replay says were created during the trace equal, page for page,
// the kernel's /proc/PID/maps at the process's end, minus what the kernel
// made itself; in attach mode, pages without a creating event are exactly
// pages that existed before perf attached. And query names the stack: the
// test program's own functions appear in it.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <set>

#include "gtest/gtest.h"
#include "processor/render/query_report.h"
#include "processor/replay/trace_loader.h"
#include "processor/session/session.h"
#include "processor/session/selection.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

// Loads each trace once for the whole suite.
const session::Session& Load(const std::string& name) {
  static std::map<std::string, std::unique_ptr<session::Session>> cache;
  auto& slot = cache[name];
  if (!slot) {
    session::SessionOptions o = TraceSessionOptions(name);
    auto t = session::Session::Open(o);
    EXPECT_TRUE(t.ok()) << name << ": " << t.status();
    if (!t.ok()) std::abort();
    slot = std::move(t).value();
  }
  return *slot;
}

// The newest process entry of `pid` in the trace.
uint32_t ProcessOf(const index::TraceIndex& idx, uint32_t pid) {
  auto ps = idx.ProcessesWithPid(pid);
  EXPECT_FALSE(ps.empty()) << "pid " << pid << " not in the trace";
  return ps.empty() ? 0 : ps.back();
}

PageSet LivePages(const index::TraceIndex& idx, uint32_t p, bool with_origin) {
  PageSet s;
  for (VersionId id : idx.RegionsAt(p, index::kEndOfTrace)) {
    const index::Version& v = idx.version(id);
    if (v.origin.valid() == with_origin) s.Add(v.start, v.end);
  }
  return s;
}

// Two loads of one trace replayed the same calls, in the same order; `more`
// checks what may differ between the two kinds of load.
void ExpectSameCalls(const index::TraceIndex& x, const index::TraceIndex& y,
                     const std::function<void(const index::CallEvent&, const index::CallEvent&)>& more) {
  ASSERT_EQ(x.num_events(), y.num_events());
  for (size_t i = 0; i < x.num_events(); ++i) {
    const index::CallEvent& a = x.event(EventId(i));
    const index::CallEvent& b = y.event(EventId(i));
    ASSERT_EQ(a.time, b.time);
    ASSERT_EQ(a.stack, b.stack);
    ASSERT_EQ(a.ret, b.ret);
    more(a, b);
  }
}

// Two loads of one trace made the same versions, in the same order.
void ExpectSameVersions(const index::TraceIndex& x, const index::TraceIndex& y) {
  ASSERT_EQ(x.num_versions(), y.num_versions());
  for (size_t i = 0; i < x.num_versions(); ++i) {
    const index::Version& a = x.version(VersionId(i));
    const index::Version& b = y.version(VersionId(i));
    ASSERT_EQ(a.start, b.start);
    ASSERT_EQ(a.end, b.end);
    ASSERT_EQ(a.t_from, b.t_from);
    ASSERT_EQ(a.t_to, b.t_to);
    ASSERT_EQ(a.origin, b.origin);
  }
}

std::vector<ManifestRow> Rows(const std::set<std::string>& modes) {
  std::vector<ManifestRow> out;
  for (const ManifestRow& r : ReadManifest()) {
    if (modes.count(r["mode"])) out.push_back(r);
  }
  return out;
}

TEST(AcceptanceTest, CreatedPagesEqualTheKernelsMapsAtTheEnd) {
  // Every recording mode, the -z ones read through the decompressor.
  auto rows = Rows({"trace-record", "record", "pipe", "jit", "record-zstd", "pipe-zstd",
                    "dwarf-zstd", "dwarf", "dwarf-z", "jit-dwarf-z"});
  ASSERT_GE(rows.size(), 25u) << "traces/manifest.tsv lost rows";
  for (const ManifestRow& row : rows) {
    SCOPED_TRACE(row["trace"] + " pid " + row["pid"] + " (" + row["role"] + ")");
    const std::string exe = row["exe"];
    if (access(LocalPath(exe).c_str(), R_OK) != 0) {
      ADD_FAILURE() << "cannot read " << LocalPath(exe) << " to find its exec-time image";
      continue;
    }
    const session::Session& t = Load(row["trace"]);
    uint32_t p = ProcessOf(t.index(), std::stoul(row["pid"]));
    PageSet created = LivePages(t.index(), p, /*with_origin=*/true);
    PageSet expected = ProcessMadePages(ReadMapsFile(TracePath(row["maps"])), exe);
    EXPECT_GT(expected.Bytes(), 0u);
    EXPECT_TRUE(created == expected)
        << "created but not in maps:" << created.Minus(expected).Describe()
        << "\nin maps but not created:" << expected.Minus(created).Describe();
    // What the kernel mapped of the executable and its interpreter at exec
    // (perf reports only their code) is known as pages from before the trace.
    std::vector<MapsRow> rows = ReadMapsFile(TracePath(row["maps"]));
    PageSet images = AllPages(rows).Minus(expected);
    for (const MapsRow& r : rows) {
      if (!r.path.empty() && r.path[0] == '[') images.Remove(r.start, r.end);
    }
    EXPECT_GT(images.Bytes(), 0u);
    PageSet unknown = images.Minus(LivePages(t.index(), p, /*with_origin=*/false));
    EXPECT_TRUE(unknown.empty()) << "exec-time image pages unknown to replay:" << unknown.Describe();
  }
}

// Pages of maps rows whose permissions say neither readable nor executable
// ("---p" guard pages): perf does not synthesize those even with -d
// (perf_event__synthesize_mmap_events skips them).
PageSet GuardPages(const std::vector<MapsRow>& rows) {
  PageSet p;
  for (const MapsRow& r : rows) {
    if (r.perms.size() >= 3 && r.perms[0] != 'r' && r.perms[2] != 'x') p.Add(r.start, r.end);
  }
  return p;
}

TEST(AcceptanceTest, AttachModeWithoutDataMapsKnowsOnlyWhatTheTraceShows) {
  auto rows = Rows({"attach"});
  ASSERT_FALSE(rows.empty());
  for (const ManifestRow& row : rows) {
    SCOPED_TRACE(row["trace"] + " pid " + row["pid"]);
    const session::Session& t = Load(row["trace"]);
    uint32_t p = ProcessOf(t.index(), std::stoul(row["pid"]));
    const index::Process& proc = t.index().process(p);
    EXPECT_TRUE(proc.existed_before_trace);
    std::vector<MapsRow> end_rows = ReadMapsFile(TracePath(row["maps"]));
    PageSet created = LivePages(t.index(), p, true);
    PageSet end = ProcessMadePages(end_rows, row["exe"]);
    PageSet pre = AllPages(ReadMapsFile(TracePath(row["pre_maps"])));
    EXPECT_GT(created.Bytes(), 0u);
    EXPECT_TRUE(created.Minus(end).empty()) << "created but gone:" << created.Minus(end).Describe();
    // Everything else at the end existed before the trace, or was moved by
    // mremap from pages that did (we know those as before-trace pages) ...
    PageSet unexplained = end.Minus(created).Minus(pre).Minus(LivePages(t.index(), p, false));
    // ... or is heap grown by the trace's first brk, whose previous break this
    // recording (no -d) never saw: replay must say so rather than guess.
    PageSet heap;
    for (const MapsRow& r : end_rows) if (r.path == "[heap]") heap.Add(r.start, r.end);
    if (!unexplained.Intersect(heap).empty()) {
      EXPECT_TRUE(proc.unknown_break_event.valid())
          << "heap pages neither created nor from before, and no unknown-break note";
    }
    unexplained = unexplained.Minus(heap);
    EXPECT_TRUE(unexplained.empty()) << "at the end, neither created nor from before:"
                                     << unexplained.Describe();
  }
}

TEST(AcceptanceTest, AttachModeWithDataMapsAccountsForEveryPage) {
  auto rows = Rows({"attach-data"});
  ASSERT_FALSE(rows.empty());
  for (const ManifestRow& row : rows) {
    SCOPED_TRACE(row["trace"] + " pid " + row["pid"]);
    const session::Session& t = Load(row["trace"]);
    uint32_t p = ProcessOf(t.index(), std::stoul(row["pid"]));
    EXPECT_FALSE(t.index().process(p).unknown_break_event.valid());
    std::vector<MapsRow> end_rows = ReadMapsFile(TracePath(row["maps"]));
    std::vector<MapsRow> pre_rows = ReadMapsFile(TracePath(row["pre_maps"]));
    PageSet created = LivePages(t.index(), p, true);
    PageSet before = LivePages(t.index(), p, false);
    PageSet end = AllPages(end_rows), pre = AllPages(pre_rows);
    EXPECT_GT(created.Bytes(), 0u);
    EXPECT_GT(before.Bytes(), 0u);
    EXPECT_TRUE(created.Intersect(before).empty());
    // Every page we know is really there at the end ...
    PageSet known = created;
    for (const auto& [s, e] : before.ranges()) known.Add(s, e);
    known.Remove(uint64_t{1} << 47, UINT64_MAX);  // [vsyscall]: above user space
    PageSet extra = known.Minus(end);
    EXPECT_TRUE(extra.empty()) << "replay has pages the kernel does not:" << extra.Describe();
    // ... and every page at the end is known, except pre-attach guard pages
    // that perf does not write even with -d.
    PageSet missing = end.Minus(known);
    PageSet unwritten = missing.Minus(GuardPages(pre_rows).Intersect(pre));
    EXPECT_TRUE(unwritten.empty()) << "at the end but unknown to replay:" << unwritten.Describe();
    // Pages without a creating event existed before the attach, at the same
    // address or at one an mremap in the trace moved them to.
    PageSet not_pre = before.Minus(pre);
    not_pre.Remove(uint64_t{1} << 47, UINT64_MAX);
    for (const auto& [s, e] : not_pre.ranges()) {
      VersionId v = t.index().Lookup(p, s, index::kEndOfTrace);
      ASSERT_TRUE(v.valid());
      EXPECT_EQ(t.index().version(v).begin, index::Begin::kMovedIn)
          << std::hex << s << "-" << e << " has no origin, was not there before, and was not moved";
    }
  }
}

// Functions defined in a C source file (their names, from definitions).
std::set<std::string> FunctionsIn(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::set<std::string> names;
  std::regex def(R"(^[A-Za-z_].*\b([A-Za-z_][A-Za-z_0-9]*)\([^;]*\)\s*\{)");
  std::smatch m;
  while (std::getline(f, line)) {
    if (std::regex_search(line, m, def)) names.insert(m[1]);
  }
  return names;
}

TEST(AcceptanceTest, QueryNamesTheTestProgramsOwnFunctions) {
  const std::set<std::string> functions = FunctionsIn(SourceDir() + "/traces/src/rules.c");
  ASSERT_GT(functions.count("do_mremap_maymove"), 0u);
  for (const ManifestRow& row :
       Rows({"trace-record", "record", "pipe", "record-zstd", "pipe-zstd"})) {
    if (row["role"] != "main" || LocalPath(row["exe"]) != SourceDir() + "/traces/bin/rules") continue;
    SCOPED_TRACE(row["trace"]);
    session::SessionOptions o;
    o.path = TracePath(row["trace"]);
    o.symbols.symfs = MakeSymfs("acceptance-symfs", std::vector<std::string>{row["exe"]});
    auto t = session::Session::Open(o);
    ASSERT_TRUE(t.ok()) << t.status();
    const index::TraceIndex& idx = (*t)->index();
    uint32_t p = ProcessOf(idx, std::stoul(row["pid"]));
    // Ask about the middle page of every region the program's own code made.
    analysis::QueryOptions q;
    q.pid = idx.process(p).pid;
    q.processes = session::ProcessesOf(idx, q.pid);
    for (VersionId id : idx.RegionsAt(p, index::kEndOfTrace)) {
      const index::Version& v = idx.version(id);
      if (v.origin.valid()) q.addresses.push_back(v.start + ((v.end - v.start) / 2 & ~4095ull));
    }
    render::Json answers = render::QueryJson(**t, q, analysis::Query((*t)->index(), q));
    ASSERT_EQ(answers.size(), q.addresses.size());
    int from_program = 0;
    std::set<std::string> seen;
    for (const render::Json& a : answers) {
      ASSERT_FALSE(a["origin"].is_null()) << a.dump();
      for (const render::Json& f : a["origin"]["stack"]) {
        if (f["dso"].is_string() && f["dso"] == row["exe"]) {
          ASSERT_TRUE(f["symbol"].is_string()) << "unsymbolized frame in the program: " << f.dump();
          std::string sym = f["symbol"];
          EXPECT_TRUE(functions.count(sym)) << sym << " is not a function of rules.c";
          seen.insert(sym);
          ++from_program;
        }
      }
    }
    EXPECT_GE(from_program, 20);
    for (const char* rule : {"do_mmap_anon", "do_map_fixed_over", "do_partial_munmap",
                             "do_brk_grow_shrink", "do_mremap_grow_inplace", "do_mremap_maymove",
                             "do_mremap_fixed", "do_mremap_dontunmap", "thread_mmap_burst"}) {
      EXPECT_TRUE(seen.count(rule)) << "no live region's stack goes through " << rule;
    }
  }
}

TEST(AcceptanceTest, RecordedBinariesAreFoundInAnyCheckout) {
  // The traces were recorded from two checkouts' traces/bin/.
  for (const char* recorded : {"/work/main/traces/bin/rules", "/work/wt/recordings/traces/bin/commit"}) {
    std::string name = std::string(recorded).substr(std::string(recorded).rfind('/') + 1);
    EXPECT_EQ(LocalPath(recorded), SourceDir() + "/traces/bin/" + name);
  }
  EXPECT_EQ(LocalPath("/usr/bin/node"), "/usr/bin/node");
  EXPECT_EQ(LocalPath("/work/main/traces/src/jit.js"), SourceDir() + "/traces/src/jit.js");
  EXPECT_EQ(LocalPath("/x/traces/bin/sub/dir"), "/x/traces/bin/sub/dir");
  for (const ManifestRow& row : ReadManifest()) {
    if (row["exe"].find("/traces/bin/") == std::string::npos) continue;
    EXPECT_EQ(access(LocalPath(row["exe"]).c_str(), R_OK), 0) << row["exe"];
  }
}

// The truth files (traces/truth/): every range a program says it made is in
// its end maps with the prot it says, and, in the traces the loader reads
// today, was created during the trace. (Which stacks created and committed it
// is for the commit and DWARF tests: verify.py checks it against perf.)
TEST(AcceptanceTest, TruthRangesAreInTheMapsAndCreatedDuringTheTrace) {
  // Every mode loads now; only the negative traces (no-callchain, ...) have no truth.
  const std::set<std::string> loadable = {"trace-record", "record", "pipe", "jit", "dwarf", "dwarf-z",
                                         "jit-dwarf-z"};
  int rows_with_truth = 0, checked_in_trace = 0;
  for (const ManifestRow& row : ReadManifest()) {
    if (row.fields.count("truth") == 0 || row["truth"].empty()) continue;
    SCOPED_TRACE(row["trace"] + " " + row["truth"]);
    ++rows_with_truth;
    std::vector<TruthRow> truth = ReadTruth(row["truth"]);
    ASSERT_FALSE(truth.empty());
    std::vector<MapsRow> maps = ReadMapsFile(TracePath(row["maps"]));
    for (const TruthRow& r : truth) {
      PageSet want;
      want.Add(r.start, r.end);
      PageSet with_prot;
      for (const MapsRow& m : maps) {
        if (m.perms.compare(0, 3, r.prot) == 0) with_prot.Add(m.start, m.end);
      }
      EXPECT_TRUE(want.Minus(with_prot).empty())
          << r.what << ": not " << r.prot << " in the maps:" << want.Minus(with_prot).Describe();
      EXPECT_TRUE(r.via == "raw" || r.via == "libc") << r.via;
      EXPECT_FALSE(r.origin.empty() || r.origin == "-") << r.what;
    }
    if (!loadable.count(row["mode"])) continue;
    const session::Session& t = Load(row["trace"]);
    uint32_t p = ProcessOf(t.index(), std::stoul(row["pid"]));
    PageSet created = LivePages(t.index(), p, /*with_origin=*/true);
    for (const TruthRow& r : truth) {
      PageSet want;
      want.Add(r.start, r.end);
      EXPECT_TRUE(want.Minus(created).empty())
          << r.what << ": not created during the trace:" << want.Minus(created).Describe();
      ++checked_in_trace;
    }
  }
  EXPECT_GE(rows_with_truth, 9);
  EXPECT_GT(checked_in_trace, 0);
}

TEST(AcceptanceTest, JitFramesComeFromThePerfMapBesideTheTrace) {
  auto rows = Rows({"jit"});
  ASSERT_FALSE(rows.empty());
  const session::Session& t = Load(rows[0]["trace"]);
  const index::TraceIndex& idx = t.index();
  const std::string map_name = "perf-" + rows[0]["pid"] + ".map";
  int jit_frames = 0;
  for (size_t e = 0; e < idx.num_events() && jit_frames < 5; ++e) {
    const index::CallEvent& ev = idx.event(EventId(e));
    for (uint64_t ip : idx.stacks().Ips(ev.stack)) {
      symbols::Frame f = t.symbolizer().Symbolize(ev.pid, ev.time, ip);
      if (f.dso.size() >= map_name.size() &&
          f.dso.compare(f.dso.size() - map_name.size(), map_name.size(), map_name) == 0) {
        ASSERT_TRUE(f.symbol.has_value());
        EXPECT_NE(f.symbol->find("JS:"), std::string::npos) << *f.symbol;
        ++jit_frames;
      }
    }
  }
  EXPECT_GE(jit_frames, 5) << "no call chain reached JIT code named by " << map_name;
}

TEST(AcceptanceTest, EachCallsSampleSpanEndsAtItsExit) {
  // (Whether the span also covers the raw_syscalls duplicates is checked by the
  // perf script plugin's tests, which count the samples perf keeps.)
  for (const char* mode : {"trace-record", "record", "record-zstd"}) {
    auto rows = Rows({mode});
    ASSERT_FALSE(rows.empty());
    const index::TraceIndex& idx = Load(rows[0]["trace"]).index();
    ASSERT_GT(idx.num_events(), 50u);
    for (size_t i = 0; i < idx.num_events(); ++i) {
      const index::CallEvent& ev = idx.event(EventId(i));
      EXPECT_LT(ev.first_time, ev.time);
      EXPECT_EQ(ev.last_time, ev.time);  // the call's own exit comes last
    }
  }
}

TEST(AcceptanceTest, SkippingRawDuplicatesUnparsedChangesNothingButTheSpans) {
  // `perf trace record` writes every call four times (syscalls:* and
  // raw_syscalls enter/exit). The CLI skips the raw duplicates by their event id;
  // the plugin reads them (raw_duplicate_times) for the sample spans. Both loads must
  // replay the same calls into the same versions.
  auto rows = Rows({"trace-record"});
  ASSERT_FALSE(rows.empty());
  std::set<std::string> seen;
  for (const ManifestRow& row : rows) {
    if (!seen.insert(row["trace"]).second) continue;  // a row per process
    SCOPED_TRACE(row["trace"]);
    std::unique_ptr<session::Session> loads[2];
    for (bool raw_duplicates : {false, true}) {
      session::SessionOptions o = TraceSessionOptions(row["trace"]);
      o.raw_duplicate_times = raw_duplicates;
      auto t = session::Session::Open(o);
      ASSERT_TRUE(t.ok()) << t.status();
      loads[raw_duplicates] = std::move(t).value();
    }
    const index::TraceIndex& skip = loads[0]->index();
    const index::TraceIndex& full = loads[1]->index();
    // The raw_duplicates of the syscalls:* samples were never parsed by the skipping
    // load (calls of the syscalls recorded only as raw_syscalls, mprotect
    // and madvise in the seed's command, are read from their raw events by
    // both).
    EXPECT_GT(skip.stats().skipped_samples, 0u);
    EXPECT_LT(skip.stats().memory_samples, full.stats().memory_samples);
    size_t widened = 0;
    ExpectSameCalls(skip, full, [&](const index::CallEvent& a, const index::CallEvent& b) {
      EXPECT_LE(b.first_time, a.first_time);
      EXPECT_GE(b.last_time, a.last_time);
      widened += b.first_time < a.first_time;
    });
    EXPECT_GT(widened, skip.num_events() / 2) << "the raw_duplicates should widen most spans";
    ExpectSameVersions(skip, full);
  }
}

TEST(AcceptanceTest, LaneOrderReplaysExactlyLikePerfsRounds) {
  // The loader orders events by CPU lanes (early) and checks that order
  // against perf's round rule; a trace that breaks it (rules-lost.data has
  // events perf itself delivers out of order) is loaded again by rounds.
  std::set<std::string> seen;
  int by_lanes = 0;
  for (const ManifestRow& row : ReadManifest()) {
    if (!seen.insert(row["trace"]).second) continue;
    SCOPED_TRACE(row["trace"]);
    absl::StatusOr<std::unique_ptr<replay::LoadedTrace>> loads[2];
    for (bool rounds_only : {false, true}) {
      replay::LoadOptions o = TraceLoadOptions(row["trace"]);
      o.perf_rounds_only = rounds_only;
      loads[rounds_only] = replay::LoadTrace(o);
    }
    // The traces of what cannot be replayed fail the same way.
    ASSERT_EQ(loads[0].status(), loads[1].status());
    if (!loads[0].ok()) continue;
    const index::TraceIndex& lanes = (*loads[0])->index();
    const index::TraceIndex& rounds = (*loads[1])->index();
    EXPECT_TRUE(rounds.stats().time_order_by_rounds);
    // Lanes are used unless perf's own order is not the sorted one.
    EXPECT_EQ(lanes.stats().time_order_by_rounds, rounds.stats().out_of_order > 0);
    by_lanes += !lanes.stats().time_order_by_rounds;
    EXPECT_EQ(lanes.stats().out_of_order, rounds.stats().out_of_order);
    EXPECT_EQ(lanes.stats().calls, rounds.stats().calls);
    ExpectSameCalls(lanes, rounds, [](const index::CallEvent& a, const index::CallEvent& b) {
      EXPECT_EQ(a.first_time, b.first_time);
      EXPECT_EQ(a.last_time, b.last_time);
    });
    ExpectSameVersions(lanes, rounds);
  }
  EXPECT_GE(by_lanes, 5);
}

TEST(AcceptanceTest, ThirtyTwoBitProgramsAreDetectedNotMisread) {
  // traces/src/c32.c (int $0x80, no libc), built `gcc -m32 -static -nostdlib`
  // and recorded with raw_syscalls only, from /tmp/unseen/w/c32: its calls
  // carry i386 numbers (its chdir is nr 12, brk on x86_64). Its binary is
  // found through --symfs.
  session::SessionOptions o;
  o.path = TracePath("c32-raw.data");
  o.symbols.symfs = MakeSymfs("c32-symfs", std::vector<std::pair<std::string, std::string>>{
                                                {"/tmp/unseen/w/c32", SourceDir() + "/traces/bin/c32"}});
  ASSERT_FALSE(o.symbols.symfs.empty());
  auto t = session::Session::Open(o);
  ASSERT_TRUE(t.ok()) << t.status();
  const index::TraceIndex& idx = (*t)->index();
  ASSERT_EQ(idx.num_processes(), 1u);
  EXPECT_TRUE(idx.process(0).is_32bit);
  EXPECT_GT(idx.stats().calls_32bit, 0u);
  EXPECT_EQ(idx.num_events(), 0u);  // nothing replayed with x86_64 numbers
  EXPECT_TRUE(LivePages(idx, 0, /*with_origin=*/true).empty());
}

TEST(AcceptanceTest, LostEventsAreReportedWithTheirTimeSpan) {
  auto rows = Rows({"lost"});
  ASSERT_FALSE(rows.empty());
  const session::Session& t = Load(rows[0]["trace"]);
  const index::TraceStats& st = t.index().stats();
  ASSERT_FALSE(st.lost.empty());
  EXPECT_GT(st.lost_records, 0u);
  for (const index::LostSpan& l : st.lost) {
    EXPECT_GT(l.count, 0u);
    EXPECT_LE(l.t_from, l.t_to);
  }
}

}  // namespace
}  // namespace pageblame::testing

// --call-graph dwarf recordings unwound (processor/unwind/): every range
// the recorded programs say they made (traces/truth/, format in
// traces/MANIFEST.md; traces/dotnet/*.truth.tsv) is blamed on a stack that
// names the function that made it, and the one that committed it where the
// truth names one. The libc rows are the point: frame-pointer stacks stop
// in libc's wrapper there (alloc-fp.data gets the hint that says so).
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "processor/session/libc_cut.h"
#include "processor/decode/syscall_decoder.h"
#include "processor/decode/tracing_data.h"
#include "processor/perf/perf_reader.h"
#include "processor/render/origin_renderer.h"
#include "processor/session/session.h"
#include "processor/symbols/inline_prefetcher.h"
#include "processor/symbols/inline_resolver.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

// A symfs in which the paths the traces were recorded with resolve here:
// this machine's /usr, every program the manifest names (its `exe` as
// recorded, found at LocalPath()), and the .NET app's native library.
std::string DwarfSymfs() {
  static const std::string root = [] {
    std::vector<std::pair<std::string, std::string>> pairs = {
        {"/usr", "/usr"},
        {"/work/wt/dotnet/traces/src/dotnet-leak/bin/Release/net10.0/libleaknative.so",
         TracePath("dotnet/libleaknative.so")}};
    std::set<std::string> seen;
    for (const ManifestRow& row : ReadManifest()) {
      const std::string& exe = row["exe"];
      if (exe.find("/traces/bin/") != std::string::npos && seen.insert(exe).second) {
        pairs.emplace_back(exe, LocalPath(exe));
      }
    }
    return MakeSymfs("unwind-truth-symfs", pairs);
  }();
  return root;
}

const session::Session& Load(const std::string& name) {
  static std::map<std::string, std::unique_ptr<session::Session>> cache;
  auto& slot = cache[name];
  if (!slot) {
    session::SessionOptions o;
    o.path = TracePath(name);
    o.symbols.symfs = DwarfSymfs();
    auto t = session::Session::Open(o);
    EXPECT_TRUE(t.ok()) << name << ": " << t.status();
    if (!t.ok()) std::abort();
    slot = std::move(t).value();
  }
  return *slot;
}

// Whether `symbol` names function `fn`: the name itself, or a JIT name
// holding it as a word ("JS:~allocateBig /…/big.js:47:21",
// "void [dotnet-leak] Program::LeakNativeMemory(int32,int32)[QuickJitted]").
bool Names(const std::string& symbol, const std::string& fn) {
  if (symbol == fn) return true;
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = symbol.find(fn); at != std::string::npos; at = symbol.find(fn, at + 1)) {
    const size_t end = at + fn.size();
    if ((at == 0 || !word(symbol[at - 1])) && (end == symbol.size() || !word(symbol[end]))) {
      return true;
    }
  }
  return false;
}

// The stack of call `id` as "a <- b <- c", and whether a frame names one of `fns`.
struct StackCheck {
  bool named = false;
  std::string text;
};
StackCheck Check(const session::Session& t, render::OriginRenderer& r, EventId id,
                 const std::vector<std::string>& fns) {
  StackCheck c;
  if (!id.valid()) {
    c.text = "(no call)";
    return c;
  }
  for (const symbols::Frame& f : r.Frames(t.index().event(id))) {
    const std::string name = f.symbol.value_or("?");
    c.text += (c.text.empty() ? "" : " <- ") + name;
    for (const std::string& fn : fns) c.named |= Names(name, fn);
  }
  return c;
}

// The live versions of process `p` overlapping [start, end) at time `at`.
std::vector<VersionId> Overlapping(const index::TraceIndex& idx, uint32_t p, uint64_t start,
                                   uint64_t end, uint64_t at) {
  std::vector<VersionId> out;
  for (VersionId id : idx.RegionsAt(p, at)) {
    const index::Version& v = idx.version(id);
    if (v.start < end && start < v.end) out.push_back(id);
  }
  return out;
}

uint32_t ProcessOf(const index::TraceIndex& idx, uint32_t pid) {
  auto ps = idx.ProcessesWithPid(pid);
  EXPECT_FALSE(ps.empty()) << "pid " << pid;
  return ps.empty() ? 0 : ps.back();
}

// Every truth row of a manifest trace: the versions covering it were made
// by a call whose stack names its origin, and committed by one naming its
// commit (where the truth names one).
void ExpectTruthNamed(const std::string& trace, int min_rows) {
  int rows = 0;
  for (const ManifestRow& row : ReadManifest()) {
    if (row["trace"] != trace || row.fields.count("truth") == 0 || row["truth"].empty()) continue;
    const session::Session& t = Load(trace);
    const index::TraceIndex& idx = t.index();
    render::OriginRenderer r(t.frames());
    const uint32_t p = ProcessOf(idx, std::stoul(row["pid"]));
    for (const TruthRow& tr : ReadTruth(row["truth"])) {
      SCOPED_TRACE(trace + ": " + tr.what + " (" + tr.origin + ", via " + tr.via + ")");
      ++rows;
      std::vector<VersionId> versions = Overlapping(idx, p, tr.start, tr.end, index::kEndOfTrace);
      ASSERT_FALSE(versions.empty());
      for (VersionId id : versions) {
        const index::Version& v = idx.version(id);
        StackCheck o = Check(t, r, v.origin, {tr.origin});
        EXPECT_TRUE(o.named) << "origin: " << o.text;
        if (tr.commit == "-") continue;
        StackCheck c = Check(t, r, v.commit, {tr.commit});
        EXPECT_TRUE(c.named) << "commit: " << c.text;
      }
    }
  }
  EXPECT_GE(rows, min_rows) << trace;
}

TEST(UnwindTruthTest, AllocDwarf) { ExpectTruthNamed("alloc-dwarf.data", 15); }
TEST(UnwindTruthTest, CommitDwarf) { ExpectTruthNamed("commit-dwarf.data", 28); }
TEST(UnwindTruthTest, VecDwarf) { ExpectTruthNamed("vec-dwarf.data", 4); }
TEST(UnwindTruthTest, PythonDwarf) { ExpectTruthNamed("python-dwarf.data", 3); }
// V8's JIT code has no CFI: from the first JS frame on, the frame pointer
// (perf's own unwinder stops at JS:~alloc, two frames below allocateBig).
TEST(UnwindTruthTest, NodeDwarfReachesTheJsFunction) { ExpectTruthNamed("node-dwarf.data", 8); }

TEST(UnwindTruthTest, FramePointerTwinGetsTheHintDwarfTracesDoNot) {
  const session::LibcCut fp = session::FindLibcCut(Load("alloc-fp.data").index(), Load("alloc-fp.data").symbolizer());
  EXPECT_TRUE(fp.Mostly()) << fp.cut << " of " << fp.calls;
  ASSERT_FALSE(fp.leaves.empty());
  const std::string hint = session::LibcCutHint(fp);
  for (const char* must : {"call-graph=dwarf", "pageblame record", "stack-size=16384"}) {
    EXPECT_NE(hint.find(must), std::string::npos) << must;
  }
  for (const char* dwarf : {"alloc-dwarf.data", "commit-dwarf.data"}) {
    const session::Session& t = Load(dwarf);
    EXPECT_EQ(session::FindLibcCut(t.index(), t.symbolizer()).cut, 0u) << dwarf;
    ASSERT_NE(t.unwind_stats(), nullptr);
  }
  // Frame-pointer traces whose calls do not go through libc: no hint.
  EXPECT_FALSE(session::FindLibcCut(Load("rules-record.data").index(), Load("rules-record.data").symbolizer()).Mostly());
}

// commit-dwarf.data's samples from one CPU come before its process's MMAP2
// records from the other in file order: they wait for the end of the round.
// In a file-mode trace they wait as places in the file, read again then
// (no stack copy held), and still name their functions (CommitDwarf above).
TEST(UnwindTruthTest, SamplesThatWaitForTheirMappingsAreReadAgainNotCopied) {
  const session::Session& t = Load("commit-dwarf.data");
  ASSERT_NE(t.unwind_stats(), nullptr);
  const unwind::UnwindStats& u = *t.unwind_stats();
  EXPECT_GT(u.waited, 0u);
  EXPECT_EQ(u.waited_reread, u.waited);
  EXPECT_LT(u.waited_max_bytes, u.waited * 256) << "only places in the file are held";
  EXPECT_EQ(u.waited_lost, 0u);
  EXPECT_EQ(u.stop_no_module, 0u);
  // Records decompressed from -z data cannot be read again: theirs wait as
  // copies (jvm-dwarf.data is a -z recording with a few such samples).
  const session::Session& z = Load("jvm-dwarf.data");
  ASSERT_NE(z.unwind_stats(), nullptr);
  const unwind::UnwindStats& zu = *z.unwind_stats();
  EXPECT_GT(zu.waited, 0u);
  EXPECT_EQ(zu.waited_reread, 0u);
  EXPECT_EQ(zu.waited_lost, 0u);
  EXPECT_GT(zu.waited_max_bytes, zu.waited * 512) << "their stack copies are held";
}

// The DWARF opened on the prefetcher's thread answers as one opened here:
// traces/bin/alloc's make_inline_buffer holds the always_inline
// inline_big_buffer.
TEST(UnwindTruthTest, PrefetchedDwarfAnswersAsDwarfOpenedInPlace) {
  symbols::DsoLocation loc;
  loc.elf_path = LocalPath("/work/main/traces/bin/alloc");
  std::unique_ptr<symbols::InlineResolver> direct = symbols::InlineResolver::Open(loc, false);
  ASSERT_NE(direct, nullptr);
  symbols::InlinePrefetcher pre(false);
  symbols::DsoLocation other = loc;
  other.elf_path += ".missing";
  EXPECT_FALSE(pre.Take(loc).has_value()) << "never requested";
  pre.Request(loc);
  pre.Request(loc);  // once per file
  pre.Request(other);
  std::optional<std::unique_ptr<symbols::InlineResolver>> got = pre.Take(loc);
  ASSERT_TRUE(got.has_value());
  ASSERT_NE(*got, nullptr);
  EXPECT_FALSE(pre.Take(loc).has_value()) << "taken once";
  std::optional<std::unique_ptr<symbols::InlineResolver>> none = pre.Take(other);
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(*none, nullptr) << "no such file: no DWARF";
  size_t inlined = 0;
  for (uint64_t a = 0; a < (64 << 10); ++a) {
    const std::vector<std::string> want = direct->InlinedAt(a);
    EXPECT_EQ((*got)->InlinedAt(a), want) << std::hex << a;
    for (const std::string& n : want) inlined += n == "inline_big_buffer";
  }
  EXPECT_GT(inlined, 0u);
}

// traces/dotnet/dotnet-leak.23474.truth.tsv: "method what start end bytes
// maps", one row per allocation (not page-aligned: malloc'd blocks inside
// glibc's mmaps, managed arrays inside GC regions).
struct DotnetRow {
  std::string method, what;
  uint64_t start = 0, end = 0;
};
std::vector<DotnetRow> ReadDotnetTruth() {
  std::vector<DotnetRow> rows;
  std::string text;
  {
    FILE* f = fopen(TracePath("dotnet/dotnet-leak.23474.truth.tsv").c_str(), "r");
    if (f == nullptr) return rows;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
    fclose(f);
  }
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::vector<std::string> c = absl::StrSplit(line, '\t');
    DotnetRow r;
    if (c.size() < 4 || line.empty() || line[0] == '#' || c[0] == "method") continue;
    if (!absl::SimpleHexAtoi(c[2], &r.start) || !absl::SimpleHexAtoi(c[3], &r.end)) continue;
    r.method = c[0];
    r.what = c[1];
    rows.push_back(r);
  }
  return rows;
}

// The time of the enter of `pid`'s marker call madvise(addr, 0, 0)
// (docs/dotnet-reference.md), read from the trace's samples; kEndOfTrace if none.
uint64_t MarkerTime(const std::string& trace, uint32_t pid, uint64_t addr) {
  auto reader = perf::PerfReader::Open(TracePath(trace));
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return index::kEndOfTrace;
  auto td = decode::TracingData::Parse((*reader)->info().tracing_data);
  EXPECT_TRUE(td.ok()) << td.status();
  if (!td.ok()) return index::kEndOfTrace;
  auto dec = decode::SyscallDecoder::Create((*reader)->info(), **td);
  EXPECT_TRUE(dec.ok()) << dec.status();
  if (!dec.ok()) return index::kEndOfTrace;
  perf::RawRecord rec;
  perf::Sample s;
  decode::DecodedSyscall d;
  while (true) {
    auto more = (*reader)->Next(&rec);
    if (!more.ok() || !*more) break;
    if (rec.type != perf::kRecordSample || !(*reader)->ParseSample(rec, &s).ok()) continue;
    if (s.pid == pid && dec->Decode(s, &d) && d.phase == decode::DecodedSyscall::Phase::kEnter &&
        d.syscall == decode::Syscall::kMadvise && d.args[0] == addr && d.args[1] == 0) {
      return s.time;
    }
  }
  return index::kEndOfTrace;
}

// A real .NET 10 app (docs/dotnet-reference.md): DWARF through glibc and
// libcoreclr.so, then the rbp chain through JIT code (memfd:doublemapper,
// named by perf-23474.map beside the trace) up to the C# method. GC memory
// is reserved at startup; the method that made it usable is its commit's.
TEST(UnwindTruthTest, DotnetMethodsAreNamed) {
  const session::Session& t = Load("dotnet/dotnet-leak.data");
  const index::TraceIndex& idx = t.index();
  render::OriginRenderer r(t.frames());
  const uint32_t p = ProcessOf(idx, 23474);
  // The app's marker madvise(0x2000, 0, MADV_NORMAL) just before READY:
  // everything the truth lists is alive then. It changes nothing, so replay
  // keeps no call for it: its time comes from the trace itself.
  const uint64_t ready = MarkerTime("dotnet/dotnet-leak.data", 23474, 0x2000);
  ASSERT_NE(ready, index::kEndOfTrace);
  std::map<std::string, int> named;
  int at_startup = 0;
  const std::vector<DotnetRow> rows = ReadDotnetTruth();
  ASSERT_GE(rows.size(), 40u);
  for (const DotnetRow& row : rows) {
    SCOPED_TRACE(row.method + ": " + row.what);
    const bool gc = row.method == "GrowManagedHeap";
    for (VersionId id : Overlapping(idx, p, row.start, row.end, ready)) {
      const index::Version& v = idx.version(id);
      StackCheck c = gc ? Check(t, r, v.commit, {"GrowManagedHeap", "ChurnManagedHeap"})
                        : Check(t, r, v.origin, {row.method});
      named[row.method] += c.named;
      // The first arrays land in the regions the GC committed while the
      // runtime started (before Main): that commit's stack is the runtime's.
      if (gc && !c.named && Check(t, r, v.commit, {"coreclr_initialize"}).named) {
        ++at_startup;
        continue;
      }
      EXPECT_TRUE(c.named) << (gc ? "commit: " : "origin: ") << c.text;
    }
  }
  for (const char* m : {"LeakNativeMemory", "LeakHGlobal", "LeakMemoryMappedFile", "GrowManagedHeap",
                        "LeakNativeMmap", "LeakNativeReserveCommit"}) {
    EXPECT_GT(named[m], 0) << m;
  }
  // Most of the managed heap was committed by the C# methods themselves.
  EXPECT_GT(named["GrowManagedHeap"], at_startup);
}

}  // namespace
}  // namespace pageblame::testing

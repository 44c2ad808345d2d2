// Reserve vs commit on real recordings: the prot replay gives every page
// equals the kernel's /proc/PID/maps written at the process's end, and the
// programs' own truth files (traces/truth/, written by the traced programs:
// traces/src/commit.c, Grow.java, ...) say which function reserved and which
// committed each range.
#include <sys/mman.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "processor/analysis/attribute_report.h"
#include "processor/regions/region.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

const session::Session& Load(const std::string& name) {
  static auto* cache = new std::map<std::string, std::unique_ptr<session::Session>>();
  auto& slot = (*cache)[name];
  if (!slot) {
    auto t = session::Session::Open(TraceSessionOptions(name));
    EXPECT_TRUE(t.ok()) << name << ": " << t.status();
    if (!t.ok()) std::abort();
    slot = std::move(t).value();
  }
  return *slot;
}

uint32_t ProcessOf(const index::TraceIndex& idx, const std::string& pid) {
  std::vector<uint32_t> ps = idx.ProcessesWithPid(std::stoul(pid));
  EXPECT_FALSE(ps.empty()) << "pid " << pid;
  return ps.empty() ? 0 : ps.back();
}

// Traces in which mprotect is replayed: recorded with its events, or with
// raw_syscalls for every call (the seed's perf trace record).
bool ReplaysMprotect(const session::Session& t) {
  return !absl::StrContains(t.sources(), "mprotect: not recorded");
}

std::string ProtOf(const std::string& perms) { return perms.substr(0, 3); }

std::string ProtOf(uint32_t prot) {
  std::string s = "---";
  if (prot & PROT_READ) s[0] = 'r';
  if (prot & PROT_WRITE) s[1] = 'w';
  if (prot & PROT_EXEC) s[2] = 'x';
  return s;
}

// The symbols of a call's stack (empty for an invalid call).
std::vector<std::string> StackSymbols(const session::Session& t, EventId ev) {
  std::vector<std::string> out;
  if (!ev.valid()) return out;
  const index::CallEvent& call = t.index().event(ev);
  for (uint64_t ip : t.index().stacks().Ips(call.stack)) {
    symbols::Frame f = t.symbolizer().Symbolize(call.pid, call.time, ip);
    out.push_back(f.symbol.value_or("?"));
  }
  return out;
}

bool Names(const std::vector<std::string>& symbols, const std::string& function) {
  for (const std::string& s : symbols) {
    if (s == function || absl::StartsWith(s, function + "(")) return true;
  }
  return false;
}

TEST(CommitTest, ProtIsPageExactAgainstTheKernelsMaps) {
  int traces = 0;
  for (const ManifestRow& row : ReadManifest()) {
    if (row["verify"] != "OK" || row["pre_maps"] != "") continue;  // attach mode: see below
    const session::Session& t = Load(row["trace"]);
    if (!ReplaysMprotect(t)) continue;
    SCOPED_TRACE(row["trace"] + " pid " + row["pid"]);
    ++traces;
    const index::TraceIndex& idx = t.index();
    const uint32_t p = ProcessOf(idx, row["pid"]);
    // Page by page over every page both know: the kernel's maps and the
    // replayed versions (from the trace or from before it).
    uint64_t compared = 0, wrong = 0;
    std::string first_wrong;
    for (const MapsRow& m : ReadMapsFile(TracePath(row["maps"]))) {
      for (uint64_t page = m.start; page < m.end; page += 4096) {
        VersionId v = idx.Lookup(p, page, index::kEndOfTrace);
        if (!v.valid() || !idx.version(v).attrs.prot_known) continue;
        ++compared;
        if (ProtOf(idx.version(v).attrs.prot) == ProtOf(m.perms)) continue;
        if (wrong++ == 0) {
          first_wrong = absl::StrCat(absl::Hex(page), ": replay ", ProtOf(idx.version(v).attrs.prot),
                                     ", kernel ", m.perms, " ", m.path);
        }
      }
    }
    EXPECT_GT(compared, 100u);
    EXPECT_EQ(wrong, 0u) << "first: " << first_wrong;
  }
  EXPECT_GE(traces, 8);
}

// What the stacks of a truth row's pages must name: with DWARF stacks, the
// functions always; with frame pointers, those that made the syscall
// themselves (via "raw"), since Debian's libc keeps no frame pointer.
bool ExpectNamed(const ManifestRow& row, const TruthRow& r) {
  return absl::StrContains(row["mode"], "dwarf") ? false  // DWARF unwinding: tests/unwind_test.cc
                                                 : r.via == "raw";
}

TEST(CommitTest, TruthRangesNameTheirReservingAndCommittingFunctions) {
  int checked = 0;
  for (const ManifestRow& row : ReadManifest()) {
    if (row.fields.count("truth") == 0 || row["truth"].empty()) continue;
    SCOPED_TRACE(row["trace"]);
    const session::Session& t = Load(row["trace"]);
    const index::TraceIndex& idx = t.index();
    const uint32_t p = ProcessOf(idx, row["pid"]);
    for (const TruthRow& r : ReadTruth(row["truth"])) {
      if (!ExpectNamed(row, r)) continue;
      SCOPED_TRACE(r.what);
      for (uint64_t page = r.start; page < r.end; page += 4096) {
        VersionId id = idx.Lookup(p, page, index::kEndOfTrace);
        ASSERT_TRUE(id.valid()) << std::hex << page;
        const index::Version& v = idx.version(id);
        EXPECT_TRUE(Names(StackSymbols(t, v.origin), r.origin)) << std::hex << page;
        if (r.commit == "-") {
          EXPECT_FALSE(v.commit.valid()) << std::hex << page;
        } else {
          EXPECT_TRUE(Names(StackSymbols(t, v.commit), r.commit)) << std::hex << page;
        }
        ++checked;
        page = std::max(page, v.end - 4096);  // one version: one answer
      }
    }
  }
  EXPECT_GT(checked, 20);
}

TEST(CommitTest, TheJavaHeapIsCommittedByOsCommitMemory) {
  // HotSpot reserves its heap PROT_NONE and commits with MAP_FIXED mmaps in
  // os::commit_memory; libjvm keeps frame pointers, so even fp stacks name
  // it (only the frame right above libc's mmap wrapper is lost).
  for (const ManifestRow& row : ReadManifest()) {
    if (row["trace"] != "jvm-fp.data") continue;
    const session::Session& t = Load(row["trace"]);
    const uint32_t p = ProcessOf(t.index(), row["pid"]);
    int committed = 0;
    for (const TruthRow& r : ReadTruth(row["truth"])) {
      VersionId id = t.index().Lookup(p, r.start, index::kEndOfTrace);
      ASSERT_TRUE(id.valid());
      const index::Version& v = t.index().version(id);
      EXPECT_TRUE(Names(StackSymbols(t, v.origin), r.origin)) << r.what;
      if (r.commit == "-") continue;
      EXPECT_TRUE(Names(StackSymbols(t, v.commit), r.commit)) << r.what;
      ++committed;
    }
    EXPECT_GE(committed, 2);
    return;
  }
  FAIL() << "jvm-fp.data is not in the manifest";
}

TEST(CommitTest, AttributeByCommitCreditsEachCommittingFunctionItsBytes) {
  for (const ManifestRow& row : ReadManifest()) {
    if (row["trace"] != "commit-trace.data") continue;
    const session::Session& t = Load(row["trace"]);
    std::vector<TruthRow> truth;
    std::vector<regions::Region> table;
    for (const TruthRow& r : ReadTruth(row["truth"])) {
      if (r.via != "raw") continue;
      truth.push_back(r);
      regions::Region region;
      region.start = r.start;
      region.end = r.end;
      table.push_back(region);
    }
    analysis::AttributeOptions o;
    o.pid = std::stoul(row["pid"]);
    o.by = analysis::CreditBy::kCommit;
    auto a = analysis::Attribute(t.index(), table, o);
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_EQ(a->regions.size(), truth.size());
    std::map<std::string, uint64_t> by_function, expected;
    for (size_t i = 0; i < truth.size(); ++i) {
      const std::string& who = truth[i].commit == "-" ? truth[i].origin : truth[i].commit;
      expected[who] += truth[i].end - truth[i].start;
      for (const analysis::CallBytes& c : a->regions[i].calls) {
        std::vector<std::string> symbols = StackSymbols(t, c.call);
        EXPECT_TRUE(Names(symbols, who)) << truth[i].what;
        by_function[who] += c.bytes;
      }
    }
    EXPECT_EQ(by_function, expected);
    EXPECT_GT(expected.size(), 8u);
    return;
  }
  FAIL() << "commit-trace.data is not in the manifest";
}

}  // namespace
}  // namespace pageblame::testing

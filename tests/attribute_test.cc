// `attribute` on the real traces (traces/manifest.tsv), with region tables
// made from each process's own /proc/PID/maps (read by the regions/ maps
// parser, as `--regions` reads it): every byte of every region goes to
// exactly one of stack / before-trace / not-mapped, the split matches a
// brute-force oracle and the kernel's view, known regions are blamed on the
// test program's own functions, and the folded output adds up.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/analysis/attribute_report.h"
#include "processor/regions/range_set.h"
#include "processor/regions/region_table_reader.h"
#include "processor/render/attribute_render.h"
#include "processor/render/folded_stacks.h"
#include "processor/session/session.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

using analysis::Attribution;
using analysis::RegionAttribution;
using ::testing::HasSubstr;

// Each trace loaded once; nullptr if it cannot be loaded (no-callchain).
const session::Session* Load(const std::string& name) {
  static std::map<std::string, std::unique_ptr<session::Session>> cache;
  static std::set<std::string> failed;
  if (failed.count(name)) return nullptr;
  auto& slot = cache[name];
  if (!slot) {
    session::SessionOptions o;
    o.path = TracePath(name);
    o.symbols.symfs = MakeSymfs(
        "attr-symfs", std::vector<std::string>{"/work/main/traces/bin/rules", "/work/main/traces/bin/attach"});
    auto t = session::Session::Open(o);
    if (!t.ok()) {
      failed.insert(name);
      return nullptr;
    }
    slot = std::move(t).value();
  }
  return slot.get();
}

// Rows with a maps file whose trace loads.
std::vector<ManifestRow> RowsWithMaps() {
  std::vector<ManifestRow> out;
  for (const ManifestRow& r : ReadManifest()) {
    if (r["maps"].empty()) continue;
    if (Load(r["trace"]) == nullptr) {
      // Not loadable by design (no call chains), or not yet: DWARF stacks
      // (exits recorded with call-graph=no) and -z compressed records.
      static const std::set<std::string> kNotLoadable = {"no-callchain", "dwarf", "dwarf-z",
                                                         "jit-dwarf-z"};
      EXPECT_TRUE(kNotLoadable.count(r["mode"])) << r["trace"] << " does not load";
      continue;
    }
    out.push_back(r);
  }
  return out;
}

regions::RegionTable MapsTable(const ManifestRow& row) {
  auto t = regions::RegionTableReader::DetectAndParse(TracePath(row["maps"]));
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) std::abort();
  EXPECT_EQ(t->format, "maps");
  return *t;
}

uint32_t Pid(const ManifestRow& row) { return static_cast<uint32_t>(std::stoul(row["pid"])); }

// The brute-force oracle: for one region, bytes per creating call, before the
// trace and not mapped, by scanning every version of the process.
struct Oracle {
  absl::flat_hash_map<uint32_t, uint64_t> by_call;  // EventId value -> bytes
  uint64_t before = 0, unmapped = 0;
  uint64_t never_seen = 0;  // covered by no version of the process up to `at`
};
Oracle BruteForce(const index::TraceIndex& idx, uint32_t p, uint64_t at, uint64_t start, uint64_t end) {
  Oracle o;
  uint64_t covered = 0;
  regions::RangeSet seen;
  for (uint32_t i = 0; i < idx.num_versions(); ++i) {
    const index::Version& v = idx.version(VersionId(i));
    if (v.process == p && v.t_from <= at && v.end > start && v.start < end) {
      seen.Add(std::max(v.start, start), std::min(v.end, end));
    }
    bool alive = at == index::kEndOfTrace ? v.t_to == index::kEndOfTrace : v.AliveAt(at);
    if (v.process != p || !alive || v.end <= start || v.start >= end) continue;
    uint64_t n = std::min(v.end, end) - std::max(v.start, start);
    covered += n;
    if (v.origin.valid()) {
      o.by_call[v.origin.value()] += n;
    } else {
      o.before += n;
    }
  }
  o.unmapped = (end - start) - covered;  // underflows (and fails) if versions overlap
  o.never_seen = (end - start) - seen.TotalBytes();
  return o;
}

void ExpectMatchesOracle(const index::TraceIndex& idx, const Attribution& a) {
  for (const RegionAttribution& ra : a.regions) {
    SCOPED_TRACE(::testing::Message() << std::hex << ra.region.start << "-" << ra.region.end);
    Oracle o = BruteForce(idx, a.process, a.at, ra.region.start, ra.region.end);
    // Exactly one bucket per byte: the three parts add up to the size.
    EXPECT_EQ(ra.created_bytes() + ra.before_trace_bytes + ra.unmapped_bytes, ra.region.size());
    EXPECT_EQ(ra.before_trace_bytes, o.before);
    EXPECT_EQ(ra.unmapped_bytes, o.unmapped);
    EXPECT_EQ(ra.never_seen_bytes, o.never_seen);
    absl::flat_hash_map<uint32_t, uint64_t> got;
    for (const analysis::CallBytes& c : ra.calls) {
      EXPECT_GT(c.bytes, 0u);
      EXPECT_TRUE(got.emplace(c.call.value(), c.bytes).second) << "call listed twice";
    }
    EXPECT_EQ(got, o.by_call);
  }
}

TEST(AttributeTest, EveryByteOfEveryMapsRegionGoesToExactlyOneBucket) {
  auto rows = RowsWithMaps();
  ASSERT_GE(rows.size(), 12u) << "traces/manifest.tsv lost rows";
  for (const ManifestRow& row : rows) {
    SCOPED_TRACE(row["trace"] + " pid " + row["pid"] + " (" + row["role"] + ")");
    const session::Session& t = *Load(row["trace"]);
    regions::RegionTable table = MapsTable(row);
    analysis::AttributeOptions o;
    o.pid = Pid(row);
    auto a = analysis::Attribute(t.index(), table.regions.ToVector(), o);
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_EQ(a->regions.size(), table.regions.size());
    uint64_t total = 0;
    for (const regions::Region& r : table.regions) total += r.size();
    EXPECT_EQ(a->bytes, total);
    EXPECT_EQ(a->created_bytes + a->before_trace_bytes + a->unmapped_bytes, total);
    uint64_t stacks = 0;
    for (const analysis::StackTotal& s : a->stacks) stacks += s.bytes;
    EXPECT_EQ(stacks, a->created_bytes);
    ExpectMatchesOracle(t.index(), *a);
  }
}

TEST(AttributeTest, CreatedBytesAreWhatTheKernelSaysTheProcessMade) {
  // The independent oracle of the foundation's acceptance test: at the end,
  // the maps file minus what the kernel made at exec is exactly what calls
  // in the trace created. Attributing the maps file must find those bytes.
  for (const ManifestRow& row : RowsWithMaps()) {
    if (row["verify"] != "OK" || row["mode"].rfind("attach", 0) == 0) continue;
    SCOPED_TRACE(row["trace"] + " pid " + row["pid"]);
    const session::Session& t = *Load(row["trace"]);
    std::vector<MapsRow> rows = ReadMapsFile(TracePath(row["maps"]));
    analysis::AttributeOptions o;
    o.pid = Pid(row);
    auto a = analysis::Attribute(t.index(), MapsTable(row).regions.ToVector(), o);
    ASSERT_TRUE(a.ok()) << a.status();
    PageSet made = ProcessMadePages(rows, row["exe"]);
    EXPECT_EQ(a->created_bytes, made.Bytes());
  }
}

// Guard pages ("---p") of a maps file: perf does not synthesize them at
// attach, even with -d.
PageSet GuardPages(const std::vector<MapsRow>& rows) {
  PageSet p;
  for (const MapsRow& r : rows) {
    if (r.perms.size() >= 3 && r.perms[0] != 'r' && r.perms[2] != 'x') p.Add(r.start, r.end);
  }
  return p;
}

TEST(AttributeTest, AttachModeSplitsBetweenTheTraceAndBeforeIt) {
  int with_data = 0;
  for (const ManifestRow& row : RowsWithMaps()) {
    if (row["pre_maps"].empty()) continue;
    SCOPED_TRACE(row["trace"]);
    const session::Session& t = *Load(row["trace"]);
    regions::RegionTable table = MapsTable(row);
    auto a = analysis::Attribute(t.index(), table.regions.ToVector(), {});  // one process: no --pid needed
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_GT(a->before_trace_bytes, 0u);
    EXPECT_GT(a->created_bytes, 0u);
    if (row["mode"] != "attach-data") continue;
    ++with_data;
    // With -d perf wrote every pre-attach mapping but the guard pages: at the
    // end, only those can be unknown to the trace.
    std::vector<MapsRow> pre_rows = ReadMapsFile(TracePath(row["pre_maps"]));
    uint64_t unsynthesized = GuardPages(pre_rows).Intersect(AllPages(pre_rows)).Bytes();
    EXPECT_LE(a->unmapped_bytes, unsynthesized);
  }
  EXPECT_GT(with_data, 0);
}

// Main-process rows of the rules program (fixed addresses, traces/MANIFEST.md).
// rules-dwarf-zstd.data has no call chains until the DWARF unwinder lands
// (its enters carry user stack copies instead): its stacks are empty.
bool HasCallChains(const ManifestRow& row) { return row["mode"] != "dwarf-zstd"; }

std::vector<ManifestRow> RulesMainRows() {
  std::vector<ManifestRow> out;
  for (const ManifestRow& r : RowsWithMaps()) {
    if (r["role"] == "main" && r["exe"] == "/work/main/traces/bin/rules" && r["verify"] == "OK") {
      out.push_back(r);
    }
  }
  return out;
}

regions::Region Range(uint64_t start, uint64_t end) {
  regions::Region r;
  r.start = start;
  r.end = end;
  return r;
}

bool StackHasFunction(const render::Json& origin, const std::string& fn, const std::string& dso) {
  if (origin.is_null()) return false;
  for (const render::Json& f : origin["stack"]) {
    if (f["symbol"].is_string() && f["symbol"] == fn && f["dso"] == dso) return true;
  }
  return false;
}

TEST(AttributeTest, RegionsMadeByKnownFunctionsAreBlamedOnThem) {
  // traces/MANIFEST.md "Fixed addresses": B(k) = 0x100000000000 + k * 0x10000000.
  const std::vector<std::pair<regions::Region, std::string>> known = {
      {Range(0x100010000000, 0x100010004000), "do_mmap_hint"},
      {Range(0x100030000000, 0x100030002000), "do_map_fixed_noreplace"},
      {Range(0x100070000000, 0x100070003000), "do_mremap_shrink"},
  };
  auto rows = RulesMainRows();
  ASSERT_GE(rows.size(), 3u);
  for (const ManifestRow& row : rows) {
    SCOPED_TRACE(row["trace"]);
    const session::Session& t = *Load(row["trace"]);
    std::vector<regions::Region> regs;
    for (const auto& k : known) regs.push_back(k.first);
    analysis::AttributeOptions o;
    o.pid = Pid(row);
    auto a = analysis::Attribute(t.index(), regs, o);
    ASSERT_TRUE(a.ok()) << a.status();
    render::Json j = render::AttributeJson(t, *a);
    ASSERT_EQ(j["regions"].size(), known.size());
    for (size_t i = 0; i < known.size(); ++i) {
      const render::Json& r = j["regions"][i];
      SCOPED_TRACE(known[i].second);
      EXPECT_EQ(r["bytes"], known[i].first.size());
      EXPECT_EQ(r["before_trace_bytes"], 0);
      EXPECT_EQ(r["unmapped_bytes"], 0);
      ASSERT_EQ(r["stacks"].size(), 1u) << r.dump();
      EXPECT_EQ(r["stacks"][0]["bytes"], known[i].first.size());
      if (!HasCallChains(row)) continue;
      EXPECT_TRUE(StackHasFunction(r["stacks"][0]["origin"], known[i].second, row["exe"]))
          << r["stacks"][0]["origin"].dump();
      // The same function shows up in the ranked stacks.
      bool ranked = false;
      for (const render::Json& s : j["stacks"]) {
        ranked |= StackHasFunction(s["origin"], known[i].second, row["exe"]);
      }
      EXPECT_TRUE(ranked);
    }
  }
}

TEST(AttributeTest, HolesAndTimesBeforeCreationAreNotMapped) {
  for (const ManifestRow& row : RulesMainRows()) {
    SCOPED_TRACE(row["trace"]);
    const session::Session& t = *Load(row["trace"]);
    analysis::AttributeOptions o;
    o.pid = Pid(row);
    // do_partial_munmap's scenario area B(4): what the kernel still has there
    // at the end is made by the program; the holes it punched are not mapped.
    regions::Region area = Range(0x100040000000, 0x100050000000);
    PageSet in_maps = AllPages(ReadMapsFile(TracePath(row["maps"])));
    PageSet span;
    span.Add(area.start, area.end);
    uint64_t kernel_has = in_maps.Intersect(span).Bytes();
    ASSERT_GT(kernel_has, 0u);
    ASSERT_LT(kernel_has, area.size());
    auto a = analysis::Attribute(t.index(), {area}, o);
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_EQ(a->regions[0].created_bytes(), kernel_has);
    EXPECT_EQ(a->regions[0].unmapped_bytes, area.size() - kernel_has);
    EXPECT_EQ(a->regions[0].before_trace_bytes, 0u);

    // The do_mmap_hint region, just before its creating call: not mapped.
    regions::Region hint = Range(0x100010000000, 0x100010004000);
    auto end = analysis::Attribute(t.index(), {hint}, o);
    ASSERT_TRUE(end.ok());
    ASSERT_EQ(end->regions[0].calls.size(), 1u);
    uint64_t created = t.index().event(end->regions[0].calls[0].call).time;
    o.at = created - 1;
    auto before = analysis::Attribute(t.index(), {hint}, o);
    ASSERT_TRUE(before.ok()) << before.status();
    EXPECT_EQ(before->regions[0].unmapped_bytes, hint.size());
    EXPECT_TRUE(before->regions[0].calls.empty());
    o.at = created;
    auto at = analysis::Attribute(t.index(), {hint}, o);
    ASSERT_TRUE(at.ok());
    EXPECT_EQ(at->regions[0].created_bytes(), hint.size());
  }
}

TEST(AttributeTest, AttributionAtTimesInsideTheTraceMatchesTheOracle) {
  for (const ManifestRow& row : RulesMainRows()) {
    SCOPED_TRACE(row["trace"]);
    const session::Session& t = *Load(row["trace"]);
    const index::TraceIndex& idx = t.index();
    regions::RegionTable table = MapsTable(row);
    // Plus one region spanning all the fixed-address scenarios.
    table.regions.push_back(Range(0x100000000000, 0x100200000000));
    std::vector<uint64_t> times;
    for (uint32_t i = 0; i < idx.num_events(); i += std::max<size_t>(1, idx.num_events() / 7)) {
      times.push_back(idx.event(EventId(i)).time);
    }
    ASSERT_GE(times.size(), 5u);
    int with_unmapped = 0, seen_then_unmapped = 0, never_seen = 0;
    for (uint64_t at : times) {
      analysis::AttributeOptions o;
      o.pid = Pid(row);
      o.at = at;
      auto a = analysis::Attribute(idx, table.regions.ToVector(), o);
      ASSERT_TRUE(a.ok()) << a.status();
      ExpectMatchesOracle(idx, *a);
      if (a->unmapped_bytes > 0) ++with_unmapped;
      for (const RegionAttribution& ra : a->regions) {
        if (ra.never_seen_bytes > 0) ++never_seen;
        if (ra.unmapped_bytes > ra.never_seen_bytes) ++seen_then_unmapped;
      }
    }
    EXPECT_GT(with_unmapped, 0);
    // Both kinds of unmapped bytes occur, so the oracle checks both.
    EXPECT_GT(never_seen, 0);
    EXPECT_GT(seen_then_unmapped, 0);
  }
}

TEST(AttributeTest, FoldedOutputParsesAndAddsUp) {
  for (const ManifestRow& row : RowsWithMaps()) {
    SCOPED_TRACE(row["trace"] + " pid " + row["pid"]);
    const session::Session& t = *Load(row["trace"]);
    analysis::AttributeOptions o;
    o.pid = Pid(row);
    auto a = analysis::Attribute(t.index(), MapsTable(row).regions.ToVector(), o);
    ASSERT_TRUE(a.ok()) << a.status();
    std::string folded = render::FoldedStacks(t, *a);
    ASSERT_FALSE(folded.empty());
    ASSERT_EQ(folded.back(), '\n');
    uint64_t total = 0, before = 0, unmapped = 0;
    std::set<std::string> seen;
    for (absl::string_view line : absl::StrSplit(absl::string_view(folded).substr(0, folded.size() - 1), '\n')) {
      size_t sp = line.rfind(' ');
      ASSERT_NE(sp, absl::string_view::npos) << line;
      std::string frames(line.substr(0, sp));
      uint64_t n = 0;
      ASSERT_TRUE(absl::SimpleAtoi(line.substr(sp + 1), &n)) << line;
      ASSERT_GT(n, 0u) << line;
      EXPECT_TRUE(seen.insert(frames).second) << "stack printed twice: " << frames;
      for (absl::string_view f : absl::StrSplit(frames, ';')) EXPECT_FALSE(f.empty()) << line;
      if (frames == "[before trace]") before = n;
      if (frames == "[not mapped]") unmapped = n;
      total += n;
    }
    EXPECT_EQ(total, a->bytes);
    EXPECT_EQ(before, a->before_trace_bytes);
    EXPECT_EQ(unmapped, a->unmapped_bytes);
  }
}

TEST(AttributeTest, FoldedFramesAreRootFirst) {
  for (const ManifestRow& row : RulesMainRows()) {
    if (!HasCallChains(row)) continue;
    SCOPED_TRACE(row["trace"]);
    const session::Session& t = *Load(row["trace"]);
    analysis::AttributeOptions o;
    o.pid = Pid(row);
    auto a = analysis::Attribute(t.index(), {Range(0x100030000000, 0x100030002000)}, o);
    ASSERT_TRUE(a.ok());
    std::string folded = render::FoldedStacks(t, *a);
    // One stack, no before/unmapped lines; main calls the scenario function.
    EXPECT_EQ(std::count(folded.begin(), folded.end(), '\n'), 1) << folded;
    EXPECT_THAT(folded, HasSubstr(";main;do_map_fixed_noreplace"));
    EXPECT_THAT(folded, ::testing::EndsWith(" 8192\n"));
  }
}

TEST(AttributeTest, ProcessChoice) {
  auto rows = RulesMainRows();
  ASSERT_FALSE(rows.empty());
  const ManifestRow& row = rows[0];
  const session::Session& t = *Load(row["trace"]);
  regions::RegionTable table = MapsTable(row);
  // The fork child shares most of the parent's layout: the choice matters.
  auto none = analysis::Attribute(t.index(), table.regions.ToVector(), {});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(none.status().message()), HasSubstr("pid " + row["pid"]));
  EXPECT_THAT(std::string(none.status().message()), HasSubstr("--pid"));
  for (const ManifestRow& r : ReadManifest()) {
    if (r["trace"] == row["trace"] && r["role"] == "fork child") {
      EXPECT_THAT(std::string(none.status().message()), HasSubstr("pid " + r["pid"]));
    }
  }
  // A range no process has: an error naming the pids.
  auto nobody = analysis::Attribute(t.index(), {Range(0x10, 0x1000)}, {});
  ASSERT_FALSE(nobody.ok());
  EXPECT_THAT(std::string(nobody.status().message()), HasSubstr("none of the"));
  EXPECT_THAT(std::string(nobody.status().message()), HasSubstr(row["pid"]));
  // An empty diff leaves nothing to attribute: no --pid needed, nothing found.
  auto empty = analysis::Attribute(t.index(), {}, {});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->bytes, 0u);
  EXPECT_TRUE(empty->stacks.empty());
  analysis::AttributeOptions bad;
  bad.pid = 1;
  auto wrong = analysis::Attribute(t.index(), table.regions.ToVector(), bad);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().message(), "pid 1 is not in the trace");
  // With --pid the same nobody-has-it range is simply not mapped.
  analysis::AttributeOptions main_pid;
  main_pid.pid = Pid(row);
  auto unmapped = analysis::Attribute(t.index(), {Range(0x10000, 0x20000)}, main_pid);
  ASSERT_TRUE(unmapped.ok());
  EXPECT_EQ(unmapped->unmapped_bytes, 0x10000u);
  EXPECT_EQ(unmapped->regions[0].never_seen_bytes, 0x10000u);
}

TEST(AttributeTest, RankedStacksAreSortedAndDeterministic) {
  const ManifestRow row = RulesMainRows().at(0);
  const session::Session& t = *Load(row["trace"]);
  analysis::AttributeOptions o;
  o.pid = Pid(row);
  auto a = analysis::Attribute(t.index(), MapsTable(row).regions.ToVector(), o);
  auto b = analysis::Attribute(t.index(), MapsTable(row).regions.ToVector(), o);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_GE(a->stacks.size(), 10u);
  // Committed bytes first (what the process can touch), then all bytes.
  for (size_t i = 1; i < a->stacks.size(); ++i) {
    EXPECT_GE(std::make_pair(a->stacks[i - 1].committed, a->stacks[i - 1].bytes),
              std::make_pair(a->stacks[i].committed, a->stacks[i].bytes));
  }
  EXPECT_EQ(render::AttributeJson(t, *a).dump(), render::AttributeJson(t, *b).dump());
  // Stacks are unique, and `regions` counts the regions each one made bytes of.
  std::set<uint32_t> ids;
  for (const analysis::StackTotal& s : a->stacks) {
    EXPECT_TRUE(ids.insert(s.stack.value()).second);
    uint32_t regions = 0;
    for (const RegionAttribution& ra : a->regions) {
      bool has = false;
      for (const analysis::CallBytes& c : ra.calls) has |= t.index().event(c.call).stack == s.stack;
      regions += has;
    }
    EXPECT_EQ(s.regions, regions);
  }
}

TEST(AttributeTest, TextNamesEveryRegionAndEveryRankedStack) {
  const ManifestRow row = RulesMainRows().at(0);
  const session::Session& t = *Load(row["trace"]);
  analysis::AttributeOptions o;
  o.pid = Pid(row);
  regions::RegionTable table = MapsTable(row);
  auto a = analysis::Attribute(t.index(), table.regions.ToVector(), o);
  ASSERT_TRUE(a.ok());
  render::TextOptions detail;
  detail.detail = true;
  std::string text = render::AttributeText(t, *a, detail);
  // The first screen: the table ranks the stacks with committed bytes.
  EXPECT_THAT(text, HasSubstr("\n   #  committed  regions  calls  kind  app frames\n   1  "));
  EXPECT_LT(text.find("total: "), text.find("\n0x"));
  for (const regions::Region& r : table.regions) {
    std::ostringstream start;
    start << "\n0x" << std::hex << r.start << "-0x" << r.end << "  ";
    EXPECT_THAT(text, HasSubstr(start.str()));
  }
  EXPECT_THAT(text, HasSubstr("stacks by bytes created, committed first (" + std::to_string(a->stacks.size()) +
                              " unique)"));
  EXPECT_THAT(text, HasSubstr("\nstack #" + std::to_string(a->stacks.size()) + ": "));
  EXPECT_THAT(text, HasSubstr(" do_mremap_maymove+0x"));  // symbolized frames
}

}  // namespace
}  // namespace pageblame::testing

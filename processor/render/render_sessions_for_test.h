// For the render/ tests: a small bundled trace opened as the commands open
// it (tests/trace_fixtures.h: the checked-in build-id cache), once per test
// process, and the results the renderers print, computed as the commands
// compute them (cli/*_command.cc): the renderers are checked against the
// answer they were given, not against what they printed yesterday.
//
//   const session::Session& s = OpenTrace("commit-trace.data");
//   analysis::MapsAnswer a = MapsOf(s, Select(s, std::nullopt, "end"), /*runs=*/true);
//   std::string text = MapsText(s, a);
#ifndef PAGEBLAME_RENDER_RENDER_SESSIONS_FOR_TEST_H_
#define PAGEBLAME_RENDER_RENDER_SESSIONS_FOR_TEST_H_

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "processor/analysis/attribute_report.h"
#include "processor/analysis/growth_report.h"
#include "processor/analysis/kind_classifier.h"
#include "processor/analysis/maps_answer.h"
#include "processor/regions/region_table_reader.h"
#include "processor/session/selection.h"
#include "processor/session/session.h"
#include "processor/session/time_spec.h"
#include "tests/trace_fixtures.h"

namespace pageblame::render {

// traces/NAME, loaded once per process (a test binary's tests run each in
// a process of its own under ctest: this only saves the second load of a
// test that renders twice). `inlines`: false is --no-inline, for tests of
// a DWARF trace that are not about frames: reading libc's DWARF for its
// inlined functions is most of such a load (~0.15 s of ~0.2 s).
inline const session::Session& OpenTrace(const std::string& name, bool inlines = true) {
  static auto* cache = new std::map<std::pair<std::string, bool>, std::unique_ptr<session::Session>>();
  std::unique_ptr<session::Session>& s = (*cache)[{name, inlines}];
  if (!s) {
    session::SessionOptions o = testing::TraceSessionOptions(name);
    o.symbols.inline_frames = inlines;
    absl::StatusOr<std::unique_ptr<session::Session>> opened = session::Session::Open(o);
    if (!opened.ok()) {
      ADD_FAILURE() << name << ": " << opened.status();
      std::abort();  // nothing below can run without it
    }
    s = *std::move(opened);
  }
  return *s;
}

// --pid and --at as a command resolves them (`at`: a time as the user types it).
inline session::Selection Select(const session::Session& s, std::optional<uint32_t> pid, const std::string& at = "end",
                                 session::PeakOf peak = session::PeakOf::kMapped) {
  absl::StatusOr<session::TimeSpec> t = session::ParseTimeSpec(at);
  EXPECT_TRUE(t.ok()) << t.status();
  absl::StatusOr<session::Selection> sel = session::Resolve({pid, t.value_or(session::TimeSpec{})}, s, peak);
  EXPECT_TRUE(sel.ok()) << sel.status();
  return sel.value_or(session::Selection{});
}

// `pageblame maps` (maps_command.cc): runs for the text.
inline analysis::MapsAnswer MapsOf(const session::Session& s, const session::Selection& sel, bool runs,
                                   bool split = false) {
  analysis::KindClassifier classifier(s.frames());
  analysis::MapsQuery q;
  q.Select(s, sel);
  q.kind_of = classifier.Function();
  q.runs = runs;
  q.split = split;
  return analysis::Maps(s.index(), q);
}

// `pageblame attribute --regions TABLE` (attribute_command.cc), the table's
// claimed rows (no two of the tables used here share bytes).
inline analysis::Attribution AttributionOf(const session::Session& s, const session::Selection& sel,
                                           const std::string& table_path, analysis::CreditBy by) {
  absl::StatusOr<regions::RegionTable> table = regions::RegionTableReader::DetectAndParse(table_path);
  EXPECT_TRUE(table.ok()) << table.status();
  std::vector<regions::Region> claimed;
  if (table.ok()) {
    for (const regions::Region& r : table->regions) {
      if (table->IsClaimed(r)) claimed.push_back(r);
    }
  }
  analysis::KindClassifier classifier(s.frames());
  analysis::AttributeOptions o;
  o.Select(s, sel);
  o.by = by;
  o.kind_of = classifier.Function();
  absl::StatusOr<analysis::Attribution> a = analysis::Attribute(s.index(), claimed, o);
  EXPECT_TRUE(a.ok()) << a.status();
  return a.value_or(analysis::Attribution{});
}

// `pageblame growth --from FROM --to TO` over the processes `sel` names.
inline analysis::Growth GrowthOf(const session::Session& s, const session::Selection& sel, const std::string& from,
                                 const std::string& to, analysis::CreditBy by) {
  analysis::KindClassifier classifier(s.frames());
  analysis::GrowthOptions o;
  o.processes = sel.processes;
  o.rss = s.residency();
  o.by = by;
  o.kind_of = classifier.Function();
  for (const auto& [text, ns] : {std::make_pair(from, &o.from), std::make_pair(to, &o.to)}) {
    absl::StatusOr<uint64_t> t =
        session::ResolveMoment(*session::ParseTimeSpec(text), s.index(), o.processes, session::PeakOf::kMapped);
    EXPECT_TRUE(t.ok()) << text << ": " << t.status();
    *ns = t.value_or(0);
  }
  absl::StatusOr<analysis::Growth> g = analysis::ComputeGrowth(s.index(), o);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.value_or(analysis::Growth{});
}

// The pid of traces/manifest.tsv's row for `trace` with `role` ("main").
inline uint32_t ManifestPid(const std::string& trace, const std::string& role = "main") {
  for (const testing::ManifestRow& r : testing::ReadManifest()) {
    if (r["trace"] == trace && r["role"] == role) return static_cast<uint32_t>(std::stoul(r["pid"]));
  }
  ADD_FAILURE() << "no " << role << " row for " << trace << " in traces/manifest.tsv";
  return 0;
}

// What a writer to a FILE* wrote.
template <typename Write>
std::string WrittenToFile(Write write) {
  std::FILE* f = std::tmpfile();
  EXPECT_NE(f, nullptr);
  EXPECT_TRUE(write(f));
  std::string out;
  std::rewind(f);
  char buf[1 << 14];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  std::fclose(f);
  return out;
}

}  // namespace pageblame::render

#endif  // PAGEBLAME_RENDER_RENDER_SESSIONS_FOR_TEST_H_

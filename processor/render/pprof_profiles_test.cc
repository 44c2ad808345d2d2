// The pprof profiles, read back with profile.proto's own classes: a valid
// gzipped Profile (string_table[0] == "", every id it refers to defined,
// each location inside its mapping) whose samples add up, value by value,
// to the answer they were made from: maps', attribute's and growth's.
#include "processor/render/pprof_profiles.h"

#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gtest/gtest.h"
#include "processor/analysis/region_label.h"
#include "processor/analysis/syscall_format.h"
#include "processor/index/committed.h"
#include "processor/render/pprof_builder.h"
#include "processor/render/render_sessions_for_test.h"
#include "profile.pb.h"

namespace pageblame::render {
namespace {

namespace pb = perftools::profiles;

// The profile in a .pb.gz, checked for what every reader of one relies on.
pb::Profile Decode(const std::string& gz) {
  pb::Profile p;
  google::protobuf::io::ArrayInputStream raw(gz.data(), static_cast<int>(gz.size()));
  google::protobuf::io::GzipInputStream in(&raw, google::protobuf::io::GzipInputStream::GZIP);
  EXPECT_TRUE(p.ParseFromZeroCopyStream(&in));
  EXPECT_GT(p.string_table_size(), 0);
  if (p.string_table_size() > 0) {
    EXPECT_EQ(p.string_table(0), "");
  }
  const auto str_ok = [&](int64_t i) { return i >= 0 && i < p.string_table_size(); };
  absl::flat_hash_map<uint64_t, const pb::Mapping*> mappings;
  for (const pb::Mapping& m : p.mapping()) {
    EXPECT_NE(m.id(), 0u);
    EXPECT_TRUE(mappings.emplace(m.id(), &m).second) << "mapping id " << m.id() << " twice";
    EXPECT_LT(m.memory_start(), m.memory_limit());
    EXPECT_TRUE(str_ok(m.filename()) && str_ok(m.build_id()));
  }
  std::set<uint64_t> functions;
  for (const pb::Function& f : p.function()) {
    EXPECT_TRUE(functions.insert(f.id()).second);
    EXPECT_TRUE(str_ok(f.name()) && str_ok(f.system_name()) && str_ok(f.filename()));
  }
  std::set<uint64_t> locations;
  for (const pb::Location& l : p.location()) {
    EXPECT_TRUE(locations.insert(l.id()).second);
    if (l.mapping_id() != 0) {
      auto m = mappings.find(l.mapping_id());
      EXPECT_NE(m, mappings.end()) << "location " << l.id() << " in no mapping";
      if (m == mappings.end()) continue;
      EXPECT_GE(l.address(), m->second->memory_start());
      EXPECT_LT(l.address(), m->second->memory_limit());
    }
    for (const pb::Line& line : l.line()) EXPECT_TRUE(functions.count(line.function_id())) << line.function_id();
  }
  for (const pb::Sample& s : p.sample()) {
    EXPECT_EQ(s.value_size(), p.sample_type_size());
    EXPECT_GT(s.location_id_size(), 0);
    for (uint64_t id : s.location_id()) EXPECT_TRUE(locations.count(id)) << id;
    for (const pb::Label& l : s.label()) EXPECT_TRUE(str_ok(l.key()) && str_ok(l.str()));
  }
  EXPECT_TRUE(str_ok(p.default_sample_type()));
  return p;
}

std::vector<std::string> Types(const pb::Profile& p) {
  std::vector<std::string> out;
  for (const pb::ValueType& t : p.sample_type()) out.push_back(p.string_table(t.type()) + "/" + p.string_table(t.unit()));
  return out;
}

// Sum of every sample's value `i`.
int64_t Sum(const pb::Profile& p, int i) {
  int64_t sum = 0;
  for (const pb::Sample& s : p.sample()) sum += s.value(i);
  return sum;
}

// The function names of a sample's leaf-first locations.
std::vector<std::string> Names(const pb::Profile& p, const pb::Sample& s) {
  absl::flat_hash_map<uint64_t, const pb::Location*> loc;
  absl::flat_hash_map<uint64_t, std::string> fn;
  for (const pb::Location& l : p.location()) loc[l.id()] = &l;
  for (const pb::Function& f : p.function()) fn[f.id()] = p.string_table(f.name());
  std::vector<std::string> out;
  for (uint64_t id : s.location_id()) {
    for (const pb::Line& line : loc[id]->line()) out.push_back(fn[line.function_id()]);
  }
  return out;
}

TEST(PprofProfilesTest, AttributesSamplesAddUpToTheTablesBytes) {
  const session::Session& s = OpenTrace("commit-trace.data");
  const analysis::Attribution a =
      AttributionOf(s, Select(s, ManifestPid("commit-trace.data")), testing::TracePath("maps/commit-trace.11890.maps"),
                    analysis::CreditBy::kCommit);
  const pb::Profile p = Decode(AttributePprof(s, a));
  EXPECT_EQ(Types(p), (std::vector<std::string>{"mapped/bytes", "committed/bytes", "regions/count"}));
  EXPECT_EQ(p.string_table(p.default_sample_type()), "mapped");
  // Every byte of the table: the stacks', before the trace, not mapped.
  EXPECT_EQ(Sum(p, 0), static_cast<int64_t>(a.bytes));
  EXPECT_EQ(Sum(p, 1), static_cast<int64_t>(a.committed_bytes + a.before_trace_committed));
  uint64_t pseudo = 0;
  for (const pb::Sample& smp : p.sample()) {
    const std::vector<std::string> names = Names(p, smp);
    if (names == std::vector<std::string>{"[before trace]"}) {
      EXPECT_EQ(smp.value(0), static_cast<int64_t>(a.before_trace_bytes));
      ++pseudo;
    } else if (names == std::vector<std::string>{"[not mapped]"}) {
      EXPECT_EQ(smp.value(0), static_cast<int64_t>(a.unmapped_bytes));
      EXPECT_EQ(smp.value(1), 0);
      ++pseudo;
    }
  }
  EXPECT_EQ(pseudo, 2u);
  EXPECT_FALSE(p.mapping().empty());
}

TEST(PprofProfilesTest, GrowthsSamplesAddUpToItsTotalsAtBothEnds) {
  const session::Session& s = OpenTrace("phases-fp.data");
  const analysis::Growth g = GrowthOf(s, Select(s, std::nullopt), "+0.2", "end", analysis::CreditBy::kCreate);
  const pb::Profile p = Decode(GrowthPprof(s, g));
  EXPECT_EQ(Types(p), (std::vector<std::string>{"mapped_growth/bytes", "committed_growth/bytes", "regions_growth/count",
                                                "mapped_from/bytes", "mapped_to/bytes", "committed_from/bytes",
                                                "committed_to/bytes"}));
  EXPECT_EQ(p.string_table(p.default_sample_type()), "mapped_growth");
  const auto i64 = [](uint64_t v) { return static_cast<int64_t>(v); };
  EXPECT_EQ(Sum(p, 0), i64(g.total_to.mapped) - i64(g.total_from.mapped));
  EXPECT_EQ(Sum(p, 1), i64(g.total_to.committed) - i64(g.total_from.committed));
  EXPECT_EQ(Sum(p, 2), i64(g.total_to.regions) - i64(g.total_from.regions));
  EXPECT_EQ(Sum(p, 3), i64(g.total_from.mapped));
  EXPECT_EQ(Sum(p, 4), i64(g.total_to.mapped));
  EXPECT_EQ(Sum(p, 5), i64(g.total_from.committed));
  EXPECT_EQ(Sum(p, 6), i64(g.total_to.committed));
  // docs/cli.md's example: grow_cache's 6 MiB, named in its stack.
  int64_t grow_cache = 0;
  for (const pb::Sample& smp : p.sample()) {
    const std::vector<std::string> names = Names(p, smp);
    if (std::find(names.begin(), names.end(), "grow_cache") != names.end()) grow_cache += smp.value(0);
  }
  EXPECT_EQ(grow_cache, 6 << 20);
}

TEST(PprofProfilesTest, MapsSamplesAreEveryRegionLabelledWithItsPidAndProt) {
  const session::Session& s = OpenTrace("rules-trace.data");
  const index::TraceIndex& idx = s.index();
  const analysis::MapsAnswer a = MapsOf(s, Select(s, std::nullopt), /*runs=*/false);
  const pb::Profile p = Decode(MapsPprof(s, a));
  EXPECT_EQ(Types(p), (std::vector<std::string>{"mapped/bytes", "committed/bytes", "regions/count"}));
  int64_t mapped = 0, committed = 0, regions = 0;
  absl::flat_hash_map<int64_t, int64_t> by_pid;
  for (const analysis::ProcessMaps& pm : a.processes) {
    for (const analysis::MapsRegion& r : pm.regions) {
      const index::Version& v = idx.version(r.version);
      mapped += v.end - v.start;
      committed += index::IsCommitted(v) ? v.end - v.start : 0;
      ++regions;
      by_pid[idx.process(pm.process).pid] += v.end - v.start;
    }
  }
  EXPECT_EQ(Sum(p, 0), mapped);
  EXPECT_EQ(Sum(p, 1), committed);
  EXPECT_EQ(Sum(p, 2), regions);
  absl::flat_hash_map<int64_t, int64_t> labelled;
  for (const pb::Sample& smp : p.sample()) {
    std::set<std::string> keys;
    int64_t pid = 0;
    for (const pb::Label& l : smp.label()) {
      keys.insert(p.string_table(l.key()));
      if (p.string_table(l.key()) == "pid") pid = l.num();
    }
    EXPECT_EQ(keys, (std::set<std::string>{"pid", "prot"}));
    labelled[pid] += smp.value(0);
  }
  EXPECT_EQ(labelled, by_pid);
}

// PprofBuilder::WriteGzipped (growth's profile, a sample at a time) writes
// the bytes AddCall / AddPseudo then Gzipped make, merges included: maps'
// samples, every region of two traces, many of them the same call with the
// same labels (merged), a pseudo stack among them.
TEST(PprofBuilderTest, WrittenASampleAtATimeItIsTheWholeProfilesBytes) {
  for (const char* trace : {"rules-trace.data", "phases-fp.data"}) {
    SCOPED_TRACE(trace);
    const session::Session& s = OpenTrace(trace);
    const index::TraceIndex& idx = s.index();
    const analysis::MapsAnswer a = MapsOf(s, Select(s, std::nullopt), /*runs=*/false);
    std::vector<PprofSample> samples;
    for (const analysis::ProcessMaps& pm : a.processes) {
      for (const analysis::MapsRegion& r : pm.regions) {
        const index::Version& v = idx.version(r.version);
        PprofSample smp;
        smp.call = v.origin;
        if (!v.origin.valid()) smp.pseudo = {analysis::RegionLabel(idx, v), "[before trace]"};
        smp.values = {static_cast<int64_t>(v.end - v.start), 1};
        smp.labels = {PprofLabel::Num("pid", idx.process(pm.process).pid),
                      PprofLabel::Str("prot", analysis::RegionProt(v.attrs))};
        samples.push_back(smp);
      }
    }
    const std::vector<PprofValueType> types = {{"mapped", "bytes"}, {"regions", "count"}};
    PprofBuilder whole(s, types, "mapped");
    whole.AddComment("a comment");
    for (const PprofSample& smp : samples) {
      if (smp.call.valid()) {
        whole.AddCall(smp.call, smp.values, smp.labels);
      } else {
        whole.AddPseudo(smp.pseudo, smp.values, smp.labels);
      }
    }
    PprofBuilder streamed(s, types, "mapped");
    streamed.AddComment("a comment");
    std::string written;
    ASSERT_TRUE(streamed.WriteGzipped(samples.size(), [&](size_t i) { return samples[i]; }, &written));
    EXPECT_EQ(written, whole.Gzipped());
    const pb::Profile p = Decode(written);
    EXPECT_LT(p.sample_size(), static_cast<int>(samples.size())) << "no samples merged: the test tests less";
    EXPECT_EQ(Sum(p, 1), static_cast<int64_t>(samples.size()));
  }
}

}  // namespace
}  // namespace pageblame::render

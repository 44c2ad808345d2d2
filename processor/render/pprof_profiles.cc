#include "processor/render/pprof_profiles.h"

#include "absl/strings/str_cat.h"
#include "processor/analysis/attribution_summary.h"
#include "processor/index/committed.h"
#include "processor/analysis/region_label.h"
#include "processor/analysis/syscall_format.h"
#include "processor/base/format.h"
#include "processor/render/pprof_builder.h"
#include "processor/render/rss_text.h"

namespace pageblame::render {
namespace {

int64_t Signed(uint64_t v) { return static_cast<int64_t>(v); }
int64_t Diff(uint64_t from, uint64_t to) { return Signed(to) - Signed(from); }

const std::vector<PprofValueType>& SpaceTypes() {
  static const std::vector<PprofValueType> kTypes = {
      {"mapped", "bytes"}, {"committed", "bytes"}, {"regions", "count"}};
  return kTypes;
}

// Inside malloc's arenas, with a heap snapshot: the bytes in live chunks and
// those glibc holds free (heap_split.h). pprof has no "unknown": other kinds
// and pseudo samples count 0.
const std::vector<PprofValueType>& HeapTypes() {
  static const std::vector<PprofValueType> kTypes = {{"in_use_space", "bytes"}, {"free_space", "bytes"}};
  return kTypes;
}
void AppendHeap(const std::optional<analysis::HeapUse>& u, std::vector<int64_t>* v) {
  v->push_back(Signed(u ? u->in_use : 0));
  v->push_back(Signed(u ? u->free : 0));
}

std::string Who(const index::TraceIndex& idx, uint32_t p) {
  const index::Process& proc = idx.process(p);
  return absl::StrCat("pid ", proc.pid, " (", std::string(idx.strings().Get(proc.comm)), ")");
}

// Each stack's "method" label: stack i's is labels[i] (none without methods).
template <typename Method>
std::vector<std::vector<PprofLabel>> MethodLabels(size_t stacks, const std::vector<Method>& methods) {
  std::vector<std::vector<PprofLabel>> labels(stacks);
  for (const Method& m : methods) {
    for (size_t i : m.group.stacks) {
      if (i < stacks) labels[i] = {PprofLabel::Str("method", m.group.method.name)};
    }
  }
  return labels;
}

// Each stack's method, an index into `methods` (kNoMethod: none): 4 B a
// stack, where a label each would be ~100.
constexpr uint32_t kNoMethod = UINT32_MAX;
template <typename Method>
std::vector<uint32_t> MethodOf(size_t stacks, const std::vector<Method>& methods) {
  std::vector<uint32_t> of(stacks, kNoMethod);
  for (size_t m = 0; m < methods.size(); ++m) {
    for (size_t i : methods[m].group.stacks) {
      if (i < stacks) of[i] = static_cast<uint32_t>(m);
    }
  }
  return of;
}

}  // namespace

std::string AttributePprof(const session::Session& trace, const analysis::Attribution& a,
                           const std::vector<analysis::MethodTotal>& methods) {
  std::vector<PprofValueType> types = SpaceTypes();
  if (a.snapshot != nullptr) types.push_back({"resident_space", "bytes"});
  const bool heap = a.heap_snapshot != nullptr;
  if (heap) types.insert(types.end(), HeapTypes().begin(), HeapTypes().end());
  PprofBuilder b(trace, types, "mapped");
  b.AddComment(absl::StrCat("pageblame attribute: ", Who(trace.index(), a.process), " at ", FormatTime(a.at),
                            a.by == analysis::CreditBy::kCommit ? ", by committing call" : ", by creating call"));
  // With a snapshot, a fourth value: resident bytes (0 where unknown); with
  // a heap snapshot, in use and free (malloc arena kinds only).
  auto values = [&](uint64_t bytes, uint64_t committed, int64_t regions, std::optional<uint64_t> rss,
                    const std::optional<analysis::HeapUse>& use) {
    std::vector<int64_t> v = {Signed(bytes), Signed(committed), regions};
    if (a.snapshot != nullptr) v.push_back(Signed(rss.value_or(0)));
    if (heap) AppendHeap(use, &v);
    return v;
  };
  const std::vector<std::vector<PprofLabel>> labels = MethodLabels(a.stacks.size(), methods);
  for (size_t i = 0; i < a.stacks.size(); ++i) {
    const analysis::StackTotal& st = a.stacks[i];
    b.AddCall(st.first_call, values(st.bytes, st.committed, st.regions, st.rss, st.heap), labels[i]);
  }
  const analysis::AttributionSummary sum = analysis::SummarizeAttribution(a);
  if (a.before_trace_bytes != 0) {
    // Resident bytes not credited to a stack are those from before the trace.
    b.AddPseudo({"[before trace]"}, values(a.before_trace_bytes, a.before_trace_committed, Signed(sum.before_trace_regions),
                                           a.rss.value_or(0) - sum.stacks_rss.value_or(0), std::nullopt));
  }
  if (a.unmapped_bytes != 0) {
    b.AddPseudo({"[not mapped]"}, values(a.unmapped_bytes, 0, Signed(sum.unmapped_regions), 0, std::nullopt));
  }
  return b.Gzipped();
}

namespace {

// GrowthPprof's profile, written to `out` (a FILE* or a string) a sample at
// a time: a million-stack growth's samples are never held.
template <typename Out>
bool WriteGrowth(const session::Session& trace, const analysis::Growth& g,
                 const std::vector<analysis::MethodGrowth>& methods, Out out) {
  std::vector<PprofValueType> types = {{"mapped_growth", "bytes"},  {"committed_growth", "bytes"},
                                       {"regions_growth", "count"}, {"mapped_from", "bytes"},
                                       {"mapped_to", "bytes"},      {"committed_from", "bytes"},
                                       {"committed_to", "bytes"}};
  // Resident bytes when a snapshot speaks for either end (0 where unknown).
  const bool rss = g.total_from.rss || g.total_to.rss;
  if (rss) types.insert(types.end(), {{"resident_growth", "bytes"}, {"resident_from", "bytes"}, {"resident_to", "bytes"}});
  // Bytes in live malloc chunks when a heap snapshot speaks for either end
  // (0 where unknown, and for other kinds).
  const bool heap = g.total_from.heap || g.total_to.heap;
  if (heap) types.insert(types.end(), {{"in_use_growth", "bytes"}, {"in_use_from", "bytes"}, {"in_use_to", "bytes"}});
  PprofBuilder b(trace, types, "mapped_growth");
  const index::TraceIndex& idx = trace.index();
  b.AddComment(absl::StrCat("pageblame growth from ", FormatTime(g.from), " to ", FormatTime(g.to),
                            g.processes.size() == 1 ? absl::StrCat(" of ", Who(idx, g.processes[0])) : "",
                            g.by == analysis::CreditBy::kCommit ? ", by committing call" : ", by creating call"));
  auto values = [rss, heap](const analysis::BytesAt& from, const analysis::BytesAt& to) {
    std::vector<int64_t> v = {Diff(from.mapped, to.mapped), Diff(from.committed, to.committed),
                              Diff(from.regions, to.regions), Signed(from.mapped), Signed(to.mapped),
                              Signed(from.committed), Signed(to.committed)};
    if (rss) {
      const uint64_t f = from.rss.value_or(0), t = to.rss.value_or(0);
      v.insert(v.end(), {Diff(f, t), Signed(f), Signed(t)});
    }
    if (heap) {
      const uint64_t f = from.heap ? from.heap->in_use : 0, t = to.heap ? to.heap->in_use : 0;
      v.insert(v.end(), {Diff(f, t), Signed(f), Signed(t)});
    }
    return v;
  };
  const std::vector<uint32_t> method_of = MethodOf(g.stacks.size(), methods);
  const bool before = g.before_from.mapped != 0 || g.before_to.mapped != 0;
  return b.WriteGzipped(g.stacks.size() + (before ? 1 : 0), [&](size_t i) {
    PprofSample s;
    if (i == g.stacks.size()) {
      s.pseudo = {"[before trace]"};
      s.values = values(g.before_from, g.before_to);
      return s;
    }
    s.call = g.stacks[i].first_call;
    s.values = values(g.stacks[i].from, g.stacks[i].to);
    if (method_of[i] != kNoMethod) s.labels = {PprofLabel::Str("method", methods[method_of[i]].group.method.name)};
    return s;
  }, out);
}

}  // namespace

std::string GrowthPprof(const session::Session& trace, const analysis::Growth& g,
                        const std::vector<analysis::MethodGrowth>& methods) {
  std::string out;
  WriteGrowth(trace, g, methods, &out);
  return out;
}

bool WriteGrowthPprof(const session::Session& trace, const analysis::Growth& g,
                      const std::vector<analysis::MethodGrowth>& methods, std::FILE* out) {
  return WriteGrowth(trace, g, methods, out);
}

std::string MapsPprof(const session::Session& trace, const analysis::MapsAnswer& a) {
  const index::TraceIndex& idx = trace.index();
  // resident_space only when the trace has snapshots: pprof has no "unknown",
  // so a region no snapshot read counts 0 there (the comment says so).
  std::vector<PprofValueType> types = SpaceTypes();
  if (a.snapshots) types.push_back({"resident_space", "bytes"});
  bool heap = false;
  for (const analysis::ProcessMaps& pm : a.processes) heap |= pm.heap_snapshot != nullptr;
  if (heap) types.insert(types.end(), HeapTypes().begin(), HeapTypes().end());
  PprofBuilder b(trace, types, "mapped");
  b.AddComment(absl::StrCat("pageblame maps at ", FormatTime(a.at)));
  for (const analysis::ProcessMaps& pm : a.processes) {
    const int64_t pid = idx.process(pm.process).pid;
    if (a.snapshots) {
      b.AddComment(absl::StrCat("pid ", pid, ": resident bytes from the ", DescribeSnapshot(pm.snapshot, a.at),
                                "; resident_space is 0 where no snapshot read the region"));
    }
    for (const analysis::MapsRegion& region : pm.regions) {
      const index::Version& v = idx.version(region.version);
      const int64_t size = Signed(v.end - v.start);
      const std::vector<PprofLabel> labels = {PprofLabel::Num("pid", pid),
                                              PprofLabel::Str("prot", analysis::RegionProt(v.attrs))};
      std::vector<int64_t> values = {size, index::IsCommitted(v) ? size : 0, 1};
      if (a.snapshots) values.push_back(Signed(region.rss.value_or(0)));
      if (heap) AppendHeap(region.heap, &values);
      if (v.origin.valid()) {
        b.AddCall(v.origin, values, labels);
      } else {
        b.AddPseudo({analysis::RegionLabel(idx, v), "[before trace]"}, values, labels);
      }
    }
  }
  return b.Gzipped();
}

}  // namespace pageblame::render

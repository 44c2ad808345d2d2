#include "processor/report/attribute_render.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "processor/report/syscall_format.h"

namespace pageblame::report {
namespace {

// "rw-p /usr/lib/libc.so.6", "MEM_PRIVATE MEM_COMMIT PAGE_READWRITE <unknown> [...]":
// what the source table said about the region.
std::string RegionLabel(const regions::Region& r) {
  std::vector<std::string> parts;
  for (const std::string* s : {&r.type, &r.state, &r.protect, &r.usage}) {
    if (!s->empty()) parts.push_back(*s);
  }
  if (!r.merged_lines.empty()) {
    // Overlapping rows merged into one region (RegionMerger): name them all.
    parts.push_back(absl::StrCat("(lines ", r.line, ", ", absl::StrJoin(r.merged_lines, ", "), ")"));
  } else if (r.line > 0) {
    parts.push_back(absl::StrCat("(line ", r.line, ")"));
  }
  return absl::StrJoin(parts, " ");
}

Json OrNull(const std::optional<uint64_t>& n) { return n ? Json(*n) : Json(nullptr); }

// A stack's "table_rss" (exact: regions with rss it made whole) and
// "table_rss_partly" (bounds: regions it made in part, or whose rss is
// unknown); null when no region has rss.
void StackTableRss(const StackTotal& st, Json* s) {
  (*s)["table_rss"] = nullptr;
  (*s)["table_rss_partly"] = nullptr;
  if (!st.table_rss) return;
  const regions::ResidentBytes& r = *st.table_rss;
  (*s)["table_rss"] = r.rss;
  Json partly;
  partly["regions"] = r.partly_rows;
  partly["bytes"] = r.partly_bytes;
  partly["rss_at_least"] = r.partly_at_least;
  partly["rss_at_most"] = r.partly_at_most;
  (*s)["table_rss_partly"] = std::move(partly);
}

// ", table rss 1.0 MiB" (+ " + 0 B to 2.0 MiB in regions made in part"), or "".
std::string StackTableRssText(const StackTotal& st) {
  if (!st.table_rss) return "";
  const regions::ResidentBytes& r = *st.table_rss;
  std::string out = absl::StrCat(", table rss ", HumanBytes(r.rss));
  if (r.partly_rows > 0) {
    absl::StrAppend(&out, " + ", HumanBytes(r.partly_at_least),
                    r.partly_at_most > r.partly_at_least ? absl::StrCat(" to ", HumanBytes(r.partly_at_most)) : "",
                    " in regions made in part");
  }
  return out;
}

std::string CallSummary(const index::TraceIndex& idx, OriginRenderer& r, EventId id) {
  const index::CallEvent& ev = idx.event(id);
  return absl::StrCat(std::string(decode::SyscallName(ev.syscall)), " at ", FormatTime(ev.time), " by ",
                      ev.pid, "/", ev.tid, ": ", r.ShortStack(ev, 4));
}

}  // namespace

Json AttributeJson(const replay::LoadedTrace& trace, const Attribution& a) {
  const index::TraceIndex& idx = trace.index();
  OriginRenderer r(idx, trace.symbolizer());
  const char* key = a.by == CreditBy::kCommit ? "commit" : "origin";
  Json regions = Json::array();
  for (const RegionAttribution& ra : a.regions) {
    Json j;
    j["start"] = Hex(ra.region.start);
    j["end"] = Hex(ra.region.end);
    j["bytes"] = ra.region.size();
    Json stacks = Json::array();
    for (const CallBytes& c : ra.calls) {
      Json s;
      s["bytes"] = c.bytes;
      s[key] = r.OriginJson(c.call);
      stacks.push_back(std::move(s));
    }
    j["stacks"] = std::move(stacks);
    j["before_trace_bytes"] = ra.before_trace_bytes;
    j["unmapped_bytes"] = ra.unmapped_bytes;
    j["table_rss"] = OrNull(ra.region.rss);
    regions.push_back(std::move(j));
  }
  Json stacks = Json::array();
  for (const StackTotal& st : a.stacks) {
    Json s;
    s["bytes"] = st.bytes;
    s["regions"] = st.regions;
    StackTableRss(st, &s);
    s[key] = r.OriginJson(st.first_call);
    stacks.push_back(std::move(s));
  }
  Json out;
  out["regions"] = std::move(regions);
  out["stacks"] = std::move(stacks);
  return out;
}

std::string AttributeText(const replay::LoadedTrace& trace, const Attribution& a, SummaryStyle frames) {
  const index::TraceIndex& idx = trace.index();
  OriginRenderer r(idx, trace.symbolizer(), frames);
  const index::Process& proc = idx.process(a.process);
  std::string at = FormatTime(a.at);
  uint64_t calls = 0;
  for (const StackTotal& st : a.stacks) calls += st.calls;
  std::string out = absl::StrCat(
      "pid ", proc.pid, " (", std::string(idx.strings().Get(proc.comm)), ") at ", at, ": ",
      a.regions.size(), " regions, ", a.bytes, " bytes (", HumanBytes(a.bytes), "): ",
      HumanBytes(a.created_bytes), a.by == CreditBy::kCommit ? " committed or created by " : " created by ",
      calls, " calls with ", a.stacks.size(),
      " unique stacks, ", HumanBytes(a.before_trace_bytes), " from before the trace, ",
      HumanBytes(a.unmapped_bytes), " not mapped\n");

  absl::flat_hash_map<StackId, size_t> rank;
  for (size_t i = 0; i < a.stacks.size(); ++i) rank[a.stacks[i].stack] = i + 1;

  for (const RegionAttribution& ra : a.regions) {
    absl::StrAppend(&out, "\n", Hex(ra.region.start), "-", Hex(ra.region.end), "  ",
                    HumanBytes(ra.region.size()), "  ",
                    ra.region.rss ? absl::StrCat("rss ", HumanBytes(*ra.region.rss), "  ") : "",
                    RegionLabel(ra.region), "\n");
    // One line per stack: a loop that mapped 20 pages is one line, not 20.
    struct Group {
      size_t rank;
      uint64_t bytes = 0;
      int calls = 0;
      EventId first;
    };
    std::vector<Group> groups;
    for (const CallBytes& c : ra.calls) {
      size_t k = rank[idx.event(c.call).stack];
      auto g = std::find_if(groups.begin(), groups.end(), [&](const Group& x) { return x.rank == k; });
      if (g == groups.end()) g = groups.insert(groups.end(), Group{k, 0, 0, c.call});
      g->bytes += c.bytes;
      ++g->calls;
      if (idx.event(c.call).time < idx.event(g->first).time) g->first = c.call;
    }
    std::stable_sort(groups.begin(), groups.end(), [](const Group& x, const Group& y) { return x.bytes > y.bytes; });
    for (const Group& g : groups) {
      absl::StrAppend(&out, absl::StrFormat("  %10s  stack #%-4d %s%s\n", HumanBytes(g.bytes), g.rank,
                                            g.calls > 1 ? absl::StrCat(g.calls, " calls, first ") : "",
                                            CallSummary(idx, r, g.first)));
    }
    if (ra.before_trace_bytes) {
      absl::StrAppend(&out, absl::StrFormat("  %10s  existed before the trace\n", HumanBytes(ra.before_trace_bytes)));
    }
    if (ra.unmapped_bytes) {
      std::string why;
      if (ra.never_seen_bytes == ra.unmapped_bytes) {
        why = " (never seen by the trace, which cannot say whether they were mapped before it began, "
              "after it ended, or by something it does not record)";
      } else if (ra.never_seen_bytes) {
        why = absl::StrCat(" (", HumanBytes(ra.never_seen_bytes), " of it never seen by the trace)");
      }
      absl::StrAppend(&out, absl::StrFormat("  %10s  not mapped at %s%s\n", HumanBytes(ra.unmapped_bytes), at, why));
    }
  }

  absl::StrAppend(&out, "\nstacks by bytes ",
                  a.by == CreditBy::kCommit ? "committed (or created, if never decommitted)" : "created",
                  " (", a.stacks.size(), " unique):\n");
  for (size_t i = 0; i < a.stacks.size(); ++i) {
    const StackTotal& st = a.stacks[i];
    const index::CallEvent& ev = idx.event(st.first_call);
    absl::StrAppend(&out, "\nstack #", i + 1, ": ", st.bytes, " bytes (", HumanBytes(st.bytes), ") in ",
                    st.regions, st.regions == 1 ? " region" : " regions", StackTableRssText(st), ", ", st.calls,
                    st.calls == 1 ? " call" : " calls", "; first: ", r.CallText(ev), "\n");
    absl::StrAppend(&out, r.StackText(ev, "    "));
  }
  return out;
}

}  // namespace pageblame::report

// What the HTML report (html_page.h) shows of one process, as one JSON
// document the page's script draws from: aggregated so that a trace of
// millions of calls gives a page of a few MB (a bucketed time axis, the
// top stacks by name, everything else as "other").
//
//   ReportOptions o;  o.process = p;  o.at = index::kEndOfTrace;
//   Json data = ReportData(trace, o);
//
// {"title", "pid", "comm", "start", "end", "at",            // seconds as perf prints them
//  "stacks": [{"frames": [root..leaf], "summary": [app frames, leaf first],
//              "call": "mmap at T by PID/TID"}],
//  "timeline": {"times": [N+1 seconds],                      // the boundaries
//               "mapped": [N+1], "committed": [N+1],         // totals at each
//               "series": [{"stack": i | -1 (before trace), "kind": "malloc" | null,
//                           "mapped": [k, v, ...],
//                           "committed": [k, v, ...]}]},     // sparse: value v from boundary k on
//  "resident": null | {"times", "total", "series": [{"stack", "bytes"}]},  // analysis/resident_timeline.h
//  "snapshots": bool,                                       // the trace has residency snapshots
//  "strip_snapshot": seconds | null,                        // the snapshot the strip's rss is from
//  "lost": [{"from", "to", "count"}],
//  "live": [{"stack": i | -1, "bytes", "committed"}],      // at `at`, for the flame graph
//  "region_count": N,                                       // regions at `at`
//  "regions": [{"start", "end", "bytes", "count", "prot", "label", "kind", "rss": n | null,
//               "origin": i | -1,
//               "origin_call", "commit": i | -1, "commit_call", "history": ["..."]}],
//                                     // count > 1: a run of alike neighbours (max_strip_regions)
//  "attribution": null | {"title", "bytes", "before_trace_bytes", "unmapped_bytes",
//                         "stacks": [{"stack": i, "bytes", "regions"}], "regions": [...]}}
//
// Values at boundary k are the exact totals of `maps --at times[k]` (the
// last boundary is the end of the trace): a growth table between any two
// boundaries is exact. Stacks are credited by their creating call; the
// series hold the `series_stacks` stacks that had the most committed bytes
// (then mapped bytes) at any boundary, the rest is their total's remainder
// ("other"). A series' kind is that of its stack's largest committed region
// (else its largest). A region's rss is that of the latest snapshot at or
// before `at` (ResidentView; null: not read, or no snapshot).
#ifndef PAGEBLAME_RENDER_REPORT_DATA_H_
#define PAGEBLAME_RENDER_REPORT_DATA_H_

#include <cstdint>
#include <optional>
#include <string>

#include "processor/analysis/attribute_report.h"
#include "processor/render/origin_renderer.h"
#include "processor/replay/trace_loader.h"
#include "processor/residency/residency_index.h"

namespace pageblame::report {

struct ReportOptions {
  uint32_t process = 0;          // the process entry shown
  uint64_t at = index::kEndOfTrace;    // the flame graph's and the address strip's moment
  std::string title;             // the trace's name
  SummaryOptions frames;  // how stack labels are said
  std::optional<Attribution> attribution;  // with a region table or a diff
  const residency::ResidencyIndex* rss = nullptr;  // residency snapshots, or null
  std::string attribution_title;
  size_t buckets = 400;          // time axis resolution
  size_t series_stacks = 80;     // stacks with a series of their own
  size_t history_entries = 6;    // per region, the latest
  // Beyond this many regions at `at`, the strip shows runs of neighbouring
  // regions with the same creating stack, prot and label as one element.
  size_t max_strip_regions = 2000;
};

Json ReportData(const replay::LoadedTrace& trace, const ReportOptions& options);

}  // namespace pageblame::report

#endif  // PAGEBLAME_RENDER_REPORT_DATA_H_

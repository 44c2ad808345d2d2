// What the HTML report (html_page.h) shows of one process, as one JSON
// document the page's script draws from: AnalyzeReport's results
// (analysis/report_analysis.h: aggregated there so that a trace of
// millions of calls gives a page of a few MB: a bucketed time axis, the top
// stacks by name, everything else as "other") and Attribute()'s.
//
//   ReportAnalysis a = AnalyzeReport(trace.index(), query);
//   ReportOptions o;  o.title = "trace.data";
//   Json data = ReportData(trace, o, a);
//
// {"title", "pid", "comm", "start", "end", "at",            // seconds as perf prints them
//  "stacks": [{"frames": [root..leaf], "summary": [app frames, leaf first],
//              "call": "mmap at T by PID/TID", "method": m}],  // frames: indices in "names"
//  "methods": [{"name", "app_frame", "stacks": [i, ...]}],  // the stacks by app method (method_groups.h)
//  "names": ["main", ...],                                  // every frame name once, whole
//  "timeline": {"times": [N+1 seconds],                      // the boundaries
//               "mapped": [N+1], "committed": [N+1],         // totals at each
//               "series": [{"stack": i | -1 (before trace), "kind": "malloc" | null,
//                           "mapped": [k, v, ...],
//                           "committed": [k, v, ...]}]},     // sparse: value v from boundary k on
//  "resident": null | {"times", "total", "series": [{"stack", "bytes"}]},  // analysis/resident_timeline.h
//  "snapshots": bool,                                       // the trace has residency snapshots
//  "strip_snapshot": seconds | null,                        // the snapshot the strip's rss is from
//  "heap_snapshot": seconds | null,                         // the heap snapshot the strip's split is from
//  "lost": [{"from", "to", "count"}],
//  "live": [{"stack": i | -1, "bytes", "committed"}],      // at `at`, for the flame graph
//  "region_count": N,                                       // regions at `at`
//  "regions": [{"start", "end", "bytes", "count", "prot", "label", "kind", "rss": n | null,
//               (kind malloc or heap only:) "in_use_bytes", "free_bytes", "held_by_glibc": n | null,
//               "origin": i | -1,
//               "origin_call", "commit": i | -1, "commit_call", "history": ["..."]}],
//                                     // count > 1: a run of alike neighbours (ReportQuery::max_strip_regions)
//  "attribution": null | {"title", "bytes", "before_trace_bytes", "unmapped_bytes", "by",
//                         "heap_snapshot_time": seconds | null,
//                         "stacks": [{"stack": i, "bytes", "committed_bytes", "regions", "kind"}],
//                         "regions": [{"start", "end", "bytes", ..., "kind"}],
//                         "methods": [{"name", "app_frame", "bytes", "committed_bytes", "regions",
//                                      "stack_count", "stacks": [i (its top 20)], "kind"}]}}
//                                     // AttributionByMethod's rows, `attribute`'s first screen;
//                                     // its stacks, regions and methods of kind malloc or heap
//                                     // also "in_use_bytes", "free_bytes", "held_by_glibc"
//
// Inside malloc's arenas (kinds malloc and heap) the bytes are split into
// in use and free held by glibc by analysis/heap_split.h, as `attribute
// --json` and `maps --json` split them (the same figures): null without a
// heap snapshot for that moment; "held_by_glibc" is the rule of the text's
// "freed; held by glibc" (render/heap_use_text.h). Other kinds have none
// of these keys.
//
// Values at boundary k are the exact totals of `maps --at times[k]` (the
// last boundary is the end of the trace, shown as the last event's time);
// the series are StackTimeline's (analysis/stack_timeline.h), the rest of
// the totals is "other". Stacks are numbered in the order the page first
// names them: the series' first. The page draws and lists by "methods":
// one series, legend entry and table row per method, the sums of its stacks. A region's rss is that of the latest
// snapshot at or before `at` (ResidentView; null: not read, or no snapshot);
// its split that of the latest heap snapshot at or before `at` (HeapView).
#ifndef PAGEBLAME_RENDER_REPORT_DATA_H_
#define PAGEBLAME_RENDER_REPORT_DATA_H_

#include <cstdint>
#include <optional>
#include <string>

#include "processor/analysis/attribute_report.h"
#include "processor/analysis/report_analysis.h"
#include "processor/render/origin_renderer.h"
#include "processor/session/session.h"

namespace pageblame::render {

struct ReportOptions {
  std::string title;                       // the trace's name
  analysis::SummaryOptions frames;                   // how stack labels are said
  std::optional<analysis::Attribution> attribution;  // with a region table or a diff (of the analysis' process and moment)
  std::string attribution_title;
  size_t history_entries = 6;              // per region, the latest
};

Json ReportData(const session::Session& trace, const ReportOptions& options, const analysis::ReportAnalysis& analysis);

}  // namespace pageblame::render

#endif  // PAGEBLAME_RENDER_REPORT_DATA_H_

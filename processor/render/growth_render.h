// Renders a Growth (growth_report.h) as the CLI contract's JSON, as text and
// as a differential folded file.
//
//   ASSIGN_OR_RETURN(Growth g, ComputeGrowth(trace.index(), options));
//   Json j = GrowthJson(trace, g);
//   // {"from", "to",
//   //  "total": {"from_bytes", "to_bytes", "growth_bytes", "from_committed_bytes",
//   //            "to_committed_bytes", "growth_committed_bytes", "from_regions", "regions"},
//   //  "before_trace": {same},
//   //  "stacks": [{same, "added_bytes", "removed_bytes", "made_gone_bytes",
//   //              "origin" (or "commit" with CreditBy::kCommit)}],
//   //  "notes": ["resident bytes at --to ... unknown: no residency snapshot of pid N ..."]}
//   std::string t = GrowthText(trace, g);
//   std::string f = GrowthFolded(trace, g);   // "main;grow 1048576 9437184\n"
//
// Times are seconds as perf prints them; `to` at the end of the trace is its
// last event's time. Origins are OriginRenderer::OriginJson of the stack's
// earliest credited call, as in `attribute`.
#ifndef PAGEBLAME_RENDER_GROWTH_RENDER_H_
#define PAGEBLAME_RENDER_GROWTH_RENDER_H_

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"

#include "processor/analysis/growth_methods.h"
#include "processor/analysis/growth_report.h"
#include "processor/render/origin_renderer.h"
#include "processor/render/text_options.h"
#include "processor/session/session.h"

namespace pageblame::render {

Json GrowthJson(const session::Session& trace, const analysis::Growth& g);
// The same with "methods" (what the CLI prints): the stacks grouped by the
// application method (analysis/growth_methods.h), in their order, each with
// the stacks' fields summed:
//   "methods": [{"method", "app_frame", "context", "from_bytes", ..., "growth_rss", "added_bytes",
//                "removed_bytes", "made_gone_bytes", "calls", "kind", "stacks": [indexes into "stacks"]}]
Json GrowthJson(const session::Session& trace, const analysis::Growth& g,
                const std::vector<analysis::MethodGrowth>& methods);
// The same written to `out` as DumpJson(GrowthJson(trace, g, methods)) +
// "\n", a stack's object at a time (render/json_stream.h): never held whole.
// False when a write failed.
bool WriteGrowthJson(const session::Session& trace, const analysis::Growth& g,
                     const std::vector<analysis::MethodGrowth>& methods, std::FILE* out);
// A header with the totals, the first screen (a table of the stacks ranked
// by committed growth, a total, the PROT_NONE reservations apart); with
// TextOptions::detail then the table of every stack's mapped bytes at both
// ends, added, removed and made-and-gone, and each stack's frames.
std::string GrowthText(const session::Session& trace, const analysis::Growth& g, const TextOptions& options = {});
// The same a row per method (the CLI's default): the method whole and as
// much of its context as TextOptions::width leaves (0: all of it), a stacks
// column, the reservations by method; with TextOptions::detail each
// method's stacks before the rest.
std::string GrowthText(const session::Session& trace, const analysis::Growth& g,
                       const std::vector<analysis::MethodGrowth>& methods, const TextOptions& options = {});
// Where a text written a piece at a time goes: false stops the writing.
using TextPut = absl::FunctionRef<bool(std::string_view)>;
// GrowthText (with `methods`: the one by method) handed to `put` a piece at
// a time, in order, their concatenation the same text: the first screen,
// then with --detail a method's, a row's or a stack's lines a piece, so a
// million stacks' detail (~2 KB of text each) is never held whole. False
// when `put` refused a piece (nothing after it is made).
bool WriteGrowthText(const session::Session& trace, const analysis::Growth& g,
                     const std::vector<analysis::MethodGrowth>* methods, const TextOptions& options, TextPut put);
// Brendan Gregg's two-column folded format (difffolded.pl's output):
// "frames from_bytes to_bytes" per stack, which flamegraph.pl draws as a
// differential flame graph (red where it grew). Stacks that print the same
// are merged; "[before trace]" last.
std::string GrowthFolded(const session::Session& trace, const analysis::Growth& g);
// The seconds of a growth end: `t` as perf prints it; the end of the
// trace (index::kEndOfTrace) as its last event's time.
double GrowthTimeSeconds(const index::TraceIndex& idx, uint64_t t);

}  // namespace pageblame::render

#endif  // PAGEBLAME_RENDER_GROWTH_RENDER_H_

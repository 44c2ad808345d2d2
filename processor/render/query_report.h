// `pageblame query`: for each address, every process that had it mapped at
// the chosen time, with the region, the creating call and stack, and (with
// history) everything that happened to that page.
//
//   QueryOptions o;  o.addresses = {0x78e8c18e7000};
//   std::vector<QueryAnswer> answers = Query(trace.index(), o);   // analysis/query_answers.h
//   Json j = QueryJson(trace, o, answers);   // [{"address","pid","region","origin","history"}, ...]
//   WriteQueryJson(trace, o, answers, stdout);   // the same, an answer at a time
#ifndef PAGEBLAME_RENDER_QUERY_REPORT_H_
#define PAGEBLAME_RENDER_QUERY_REPORT_H_

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "processor/analysis/query_answers.h"
#include "processor/analysis/resident_view.h"
#include "processor/render/origin_renderer.h"
#include "processor/session/session.h"

namespace pageblame::render {

// `answers` as Query(trace.index(), options) made them (with their lineage).
Json QueryJson(const session::Session& trace, const analysis::QueryOptions& options,
               const std::vector<analysis::QueryAnswer>& answers);
// DumpJson(QueryJson(...)) + "\n" to `out`, made and written an answer at a
// time: a .NET GC page's history alone can be megabytes, a region list's
// answers a gigabyte. False when a write failed.
bool WriteQueryJson(const session::Session& trace, const analysis::QueryOptions& options,
                    const std::vector<analysis::QueryAnswer>& answers, std::FILE* out);
std::string QueryText(const session::Session& trace, const analysis::QueryOptions& options,
                      const std::vector<analysis::QueryAnswer>& answers);
// The text block for the region `v`: its range, the call that created it (or
// "existed before the trace") with `stack_text(call)`, and the move that
// brought it here. Shared by `pageblame query` and the perf script plugin,
// which names frames with perf's own symbols.
std::string RegionText(const index::TraceIndex& idx, const index::Version& v, OriginRenderer& r,
                       const std::function<std::string(const index::CallEvent&)>& stack_text);
// "  resident (snapshot at T; 1.2 MiB of the region resident)", why it is
// unknown, or "" when the trace has no snapshots (`snapshots`:
// ResidentView::has_snapshots) or the answer no process. `a` as Query()
// made it. Shared with the plugin.
std::string ResidentText(const analysis::QueryAnswer& a, bool snapshots);
// Inside malloc's arenas (kind malloc/heap), when the trace has heap
// snapshots (`snapshots`): the line saying what of the page and of its
// region is in use or free held by glibc at the snapshot; "" otherwise.
std::string HeapText(const analysis::QueryAnswer& a, bool snapshots);
// For a page not mapped at the time asked that its process had before
// (`lineage`: the page's PageLineage up to then): "  not mapped; it was in
// [..) until T, unmapped by ..." (empty if the lineage is).
std::string GoneText(const index::TraceIndex& idx, OriginRenderer& r, const std::vector<analysis::HistoryEntry>& lineage);

}  // namespace pageblame::render

#endif  // PAGEBLAME_RENDER_QUERY_REPORT_H_

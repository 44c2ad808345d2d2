// `pageblame query`: for each address, every process that had it mapped at
// the chosen time, with the region, the creating call and stack, and (with
// history) everything that happened to that page.
//
//   QueryOptions o;  o.addresses = {0x78e8c18e7000};
//   Json j = QueryJson(trace, o);   // [{"address","pid","region","origin","history"}, ...]
#ifndef PAGEBLAME_REPORT_QUERY_REPORT_H_
#define PAGEBLAME_REPORT_QUERY_REPORT_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "processor/replay/trace_loader.h"
#include "processor/report/origin_renderer.h"

namespace pageblame::report {

struct QueryOptions {
  std::vector<uint64_t> addresses;
  std::optional<uint32_t> pid;
  uint64_t at = index::kLive;
  bool history = false;  // text: print the page's history (JSON always has it)
};

Json QueryJson(const replay::LoadedTrace& trace, const QueryOptions& options);
// The text block for the region `v`: its range, the call that created it (or
// "existed before the trace") with `stack_text(call)`, and the move that
// brought it here. Shared by `pageblame query` and the perf script plugin,
// which names frames with perf's own symbols.
std::string RegionText(const index::TraceIndex& idx, const index::Version& v, OriginRenderer& r,
                       const std::function<std::string(const index::CallEvent&)>& stack_text);
std::string QueryText(const replay::LoadedTrace& trace, const QueryOptions& options);

}  // namespace pageblame::report

#endif  // PAGEBLAME_REPORT_QUERY_REPORT_H_

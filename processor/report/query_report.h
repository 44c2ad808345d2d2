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
#include "processor/report/resident_view.h"
#include "processor/residency/residency_index.h"

namespace pageblame::report {

struct QueryOptions {
  std::vector<uint64_t> addresses;
  std::optional<uint32_t> pid;      // one pid was asked about
  std::vector<uint32_t> processes;  // the process entries it names, or all (session::ProcessesOf)
  uint64_t at = index::kLive;
  bool history = false;  // text: print the page's history (JSON always has it)
  // Residency snapshots (null: none): whether the page was in RAM, and the
  // region's resident bytes, as of the latest snapshot at or before `at`.
  const residency::ResidencyIndex* rss = nullptr;
};

// One (address, process) answer of a query; `version` is invalid if the page
// is not mapped there at the time asked (then `process` is its last tenant,
// or, with one pid asked about, that pid's newest process, or none).
struct QueryAnswer {
  uint64_t address;
  std::optional<uint32_t> process;
  VersionId version;
};
// Each address in every process of `procs` that had it mapped at `at`; if
// none, its last tenant(s) among them (history says how the page went), or
// one answer without a process (`one_pid`: for the newest of `procs`).
std::vector<QueryAnswer> QueryAnswers(const index::TraceIndex& idx, const std::vector<uint32_t>& procs,
                                      const std::vector<uint64_t>& addresses, uint64_t at, bool one_pid);

Json QueryJson(const replay::LoadedTrace& trace, const QueryOptions& options);
// The text block for the region `v`: its range, the call that created it (or
// "existed before the trace") with `stack_text(call)`, and the move that
// brought it here. Shared by `pageblame query` and the perf script plugin,
// which names frames with perf's own symbols.
std::string RegionText(const index::TraceIndex& idx, const index::Version& v, OriginRenderer& r,
                       const std::function<std::string(const index::CallEvent&)>& stack_text);
std::string QueryText(const replay::LoadedTrace& trace, const QueryOptions& options);
// "  resident (snapshot at T; 1.2 MiB of the region resident)", why it is
// unknown, or "" when the trace has no snapshots. Shared with the plugin.
std::string ResidentText(const ResidentView& rss, const QueryAnswer& a, const index::TraceIndex& idx,
                         uint64_t at);
// For a page not mapped at `at` that process p had before: "  not mapped;
// it was in [..) until T, unmapped by ..." (empty if p never had it).
std::string GoneText(const index::TraceIndex& idx, OriginRenderer& r, uint32_t p, uint64_t addr,
                     uint64_t at);

}  // namespace pageblame::report

#endif  // PAGEBLAME_REPORT_QUERY_REPORT_H_

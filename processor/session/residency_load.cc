#include "processor/session/residency_load.h"

#include <sys/stat.h>

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "processor/residency/snapshot_file.h"

namespace pageblame::session {

residency::TraceFacts FactsOf(const replay::LoadedTrace& trace) {
  residency::TraceFacts f;
  const auto& attrs = trace.info().attrs;
  // One clock for the whole trace, or none that user space can read.
  if (!attrs.empty()) {
    f.clockid = attrs.front().clockid;
    for (const perf::EventAttr& a : attrs) {
      if (a.clockid != f.clockid) f.clockid.reset();
    }
  }
  const index::TraceIndex& idx = trace.index();
  // The recording began at perf's clock reference (HEADER_CLOCK_DATA) when it
  // has one; its first memory call may come much later (an idle process
  // attached to), or never.
  f.first_time = idx.stats().first_time;
  const perf::FileInfo& info = trace.info();
  if (info.clock_start && info.clock_start_clockid == f.clockid && f.clockid) {
    f.first_time = f.first_time == 0 ? *info.clock_start : std::min(f.first_time, *info.clock_start);
  }
  for (size_t p = 0; p < idx.num_processes(); ++p) f.pids.push_back(idx.process(p).pid);
  return f;
}

absl::StatusOr<ResidencyLoad> LoadResidency(const replay::LoadedTrace& trace, const std::string& trace_path,
                                            const ResidencyRequest& request) {
  ResidencyLoad out;
  if (request.off) return out;
  const bool named = request.path.has_value();
  std::string path = named ? *request.path : residency::SnapshotPathFor(trace_path);
  struct stat st;
  if (!named && (trace_path == "-" || ::stat(path.c_str(), &st) != 0)) {
    if (request.required) {
      return absl::FailedPreconditionError(absl::StrCat(
          "no residency snapshots: ", trace_path == "-" ? "a trace read from a pipe has none beside it"
                                                         : absl::StrCat(path, " does not exist"),
          " (pageblame record writes TRACE.rss beside the trace; --rss FILE names one)"));
    }
    return out;
  }
  absl::StatusOr<residency::ResidencyIndex> index = residency::ResidencyIndex::Load(path, FactsOf(trace));
  if (!index.ok()) {
    if (named || request.required) return index.status();
    out.warning = absl::StrCat("warning: ", index.status().message(), "; resident bytes are left out");
    return out;
  }
  out.index = std::make_unique<residency::ResidencyIndex>(*std::move(index));
  return out;
}

}  // namespace pageblame::session

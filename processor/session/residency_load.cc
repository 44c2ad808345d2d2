#include "processor/session/residency_load.h"

#include <sys/stat.h>

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "processor/base/side_file_trust.h"
#include "processor/residency/snapshot_file.h"

namespace pageblame::session {

namespace {

// When the trace file was last written, on the trace's clock: perf's clock
// data pairs the recording's start on that clock with the wall clock.
uint64_t EndOf(const perf::FileInfo& info, const std::string& path) {
  struct stat st;
  if (path.empty() || path == "-" || !info.clock_start || !info.clock_start_wall ||
      ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return 0;
  }
  const uint64_t mtime = static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  if (mtime < *info.clock_start_wall) return 0;  // a clock set back since: unknown
  return *info.clock_start + (mtime - *info.clock_start_wall);
}

}  // namespace

residency::TraceFacts FactsOf(const index::TraceIndex& idx, const perf::FileInfo& info,
                              const std::string& trace_path) {
  residency::TraceFacts f;
  const auto& attrs = info.attrs;
  // One clock for the whole trace, or none that user space can read.
  if (!attrs.empty()) {
    f.clockid = attrs.front().clockid;
    for (const perf::EventAttr& a : attrs) {
      if (a.clockid != f.clockid) f.clockid.reset();
    }
  }
  // The recording began at perf's clock reference (HEADER_CLOCK_DATA) when it
  // has one; its first memory call may come much later (an idle process
  // attached to), or never.
  f.first_time = idx.stats().first_time;
  if (info.clock_start && info.clock_start_clockid == f.clockid && f.clockid) {
    f.first_time = f.first_time == 0 ? *info.clock_start : std::min(f.first_time, *info.clock_start);
  }
  for (size_t p = 0; p < idx.num_processes(); ++p) f.pids.push_back(idx.process(p).pid);
  // Without clock data the end is unknown: the last memory call is no
  // bound (an idle process makes none for as long as it is recorded).
  if (f.clockid && info.clock_start_clockid == f.clockid) {
    if (const uint64_t end = EndOf(info, trace_path); end != 0) f.end_time = std::max(end, idx.stats().last_time);
  }
  return f;
}

absl::StatusOr<ResidencyLoad> LoadResidency(const residency::TraceFacts& facts, const std::string& trace_path,
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
  // A file the user names is theirs; one found by the trace's name is
  // judged as every side file is.
  absl::StatusOr<std::unique_ptr<InputFile>> file =
      named ? InputFile::Open(path, residency::kSnapshotFileWhat, InputFile::Accept::kRegular)
            : OpenSideFile(path, residency::kSnapshotFileWhat, request.force);
  absl::StatusOr<residency::ResidencyIndex> index =
      file.ok() ? residency::ResidencyIndex::Load(**file, facts)
                : absl::StatusOr<residency::ResidencyIndex>(file.status());
  if (!index.ok()) {
    if (named || request.required) return index.status();
    out.warning = absl::StrCat("warning: ", index.status().message(), "; resident bytes are left out");
    return out;
  }
  out.index = std::make_unique<residency::ResidencyIndex>(*std::move(index));
  return out;
}

}  // namespace pageblame::session

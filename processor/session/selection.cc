#include "processor/session/selection.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "processor/base/status_macros.h"
#include "processor/base/usage_error.h"
#include "processor/report/bytes_timeline.h"
#include "processor/report/syscall_format.h"

namespace pageblame::session {
namespace {

// A process that exited having unmapped most of what it had (a program
// started under perf tears its memory down before it exits): at the end
// there is little to ask about. The first such process, with the command
// that helps; nullopt if none.
std::optional<std::string> TeardownNote(const index::TraceIndex& idx, const std::vector<uint32_t>& procs) {
  for (uint32_t p : procs) {
    const index::Process& proc = idx.process(p);
    if (proc.t_exit == index::kLive) continue;
    // Only since its last exec: what it held before was another program's.
    const index::MappedTally::Point peak = proc.mapped.Peak();
    const uint64_t end = proc.mapped.now();
    constexpr uint64_t kWorthSaying = 1 << 20;
    if (peak.bytes < end + kWorthSaying || end * 2 > peak.bytes) continue;
    return absl::StrFormat(
        "note: pid %u (%s) exited holding %s of the %s it had mapped at its peak (%s): at the end of "
        "the trace its memory was already unmapped; to see it: --pid %u --at peak",
        proc.pid, std::string(idx.strings().Get(proc.comm)), report::HumanBytes(end),
        report::HumanBytes(peak.bytes), report::FormatTime(peak.time), proc.pid);
  }
  return std::nullopt;
}

}  // namespace

std::vector<uint32_t> ProcessesOf(const index::TraceIndex& idx, std::optional<uint32_t> pid) {
  std::vector<uint32_t> out;
  for (uint32_t p = 0; p < idx.num_processes(); ++p) {
    if (!pid || idx.process(p).pid == *pid) out.push_back(p);
  }
  // Entries are numbered as they start: stable by pid keeps start order.
  std::stable_sort(out.begin(), out.end(),
                   [&](uint32_t a, uint32_t b) { return idx.process(a).pid < idx.process(b).pid; });
  return out;
}

std::string PidList(const index::TraceIndex& idx) { return absl::StrJoin(idx.Pids(), ", "); }

absl::Status CheckPid(const index::TraceIndex& idx, std::optional<uint32_t> pid) {
  if (!pid || !idx.ProcessesWithPid(*pid).empty()) return absl::OkStatus();
  return UsageError(absl::StrCat("no process with pid ", *pid, " in the trace (its pids: ", PidList(idx), ")"));
}

absl::StatusOr<uint64_t> ResolveMoment(const TimeSpec& at, const index::TraceIndex& idx,
                                       const std::vector<uint32_t>& processes, PeakOf peak) {
  return ResolveTime(at, idx, [&] {
    return report::BytesTimeline::Of(idx, processes).Peak(peak == PeakOf::kCommitted).time;
  });
}

absl::StatusOr<Selection> Resolve(const SelectionRequest& request, const replay::LoadedTrace& trace,
                                  PeakOf peak) {
  const index::TraceIndex& idx = trace.index();
  RETURN_IF_ERROR(CheckPid(idx, request.pid));
  Selection out;
  out.pid = request.pid;
  out.processes = ProcessesOf(idx, request.pid);
  ASSIGN_OR_RETURN(out.at, ResolveMoment(request.at, idx, out.processes, peak));
  if (request.at.kind == TimeSpec::Kind::kEnd) {
    if (std::optional<std::string> note = TeardownNote(idx, out.processes)) out.notes.push_back(*note);
  }
  return out;
}

}  // namespace pageblame::session

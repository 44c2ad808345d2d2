#include "processor/session/selection.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "processor/index/bytes_timeline.h"
#include "processor/base/format.h"
#include "processor/base/status_macros.h"
#include "processor/base/usage_error.h"

namespace pageblame::session {
namespace {

// A process that exited having unmapped most of what it had (a program
// started under perf tears its memory down before it exits): at the end
// there is little to ask about. The first such process, with the command
// that helps; nullopt if none.
std::optional<std::string> TeardownNote(const index::TraceIndex& idx, const std::vector<uint32_t>& procs) {
  for (uint32_t p : procs) {
    const index::Process& proc = idx.process(p);
    if (proc.t_exit == index::kEndOfTrace) continue;
    // Only since its last exec: what it held before was another program's.
    const index::MappedTally::Point peak = proc.mapped.Peak();
    const uint64_t end = proc.mapped.now();
    constexpr uint64_t kWorthSaying = 1 << 20;
    if (peak.bytes < end + kWorthSaying || end * 2 > peak.bytes) continue;
    return absl::StrFormat(
        "note: pid %u (%s) exited holding %s of the %s it had mapped at its peak (%s): at the end of "
        "the trace its memory was already unmapped; to see it: --pid %u --at peak",
        proc.pid, std::string(idx.strings().Get(proc.comm)), HumanBytes(end),
        HumanBytes(peak.bytes), FormatTime(peak.time), proc.pid);
  }
  return std::nullopt;
}

// perf -a (`pageblame record -p` of a process alone in its cgroup: per CPU,
// limited to the cgroup) lists every process of the machine at its start.
bool SystemWide(const perf::FileInfo& info) {
  for (const std::string& arg : info.cmdline) {
    if (arg == "-a" || arg == "--all-cpus") return true;
  }
  return false;
}

// Of `procs`, those with a memory call in the trace; all of them if none has.
std::vector<uint32_t> WithCalls(const index::TraceIndex& idx, const std::vector<uint32_t>& procs) {
  absl::flat_hash_set<uint32_t> pids;
  for (size_t i = 0; i < idx.num_events(); ++i) pids.insert(idx.event(EventId(static_cast<uint32_t>(i))).pid);
  std::vector<uint32_t> out;
  for (uint32_t p : procs) {
    if (pids.contains(idx.process(p).pid)) out.push_back(p);
  }
  return out.empty() ? procs : out;
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

std::vector<uint32_t> DefaultProcesses(const Session& session) {
  std::vector<uint32_t> all = ProcessesOf(session.index(), std::nullopt);
  return SystemWide(session.info()) ? WithCalls(session.index(), all) : all;
}

absl::Status CheckPid(const index::TraceIndex& idx, std::optional<uint32_t> pid) {
  if (!pid || !idx.ProcessesWithPid(*pid).empty()) return absl::OkStatus();
  return UsageError(absl::StrCat("no process with pid ", *pid, " in the trace (its pids: ", PidList(idx), ")"));
}

absl::StatusOr<uint64_t> ResolveMoment(const TimeSpec& at, const index::TraceIndex& idx,
                                       const std::vector<uint32_t>& processes, PeakOf peak,
                                       uint64_t reached) {
  return ResolveTime(
      at, idx, [&] { return index::BytesTimeline::Of(idx, processes).Peak(peak == PeakOf::kCommitted).time; },
      reached);
}

absl::StatusOr<Selection> Resolve(const SelectionRequest& request, const Session& session,
                                  PeakOf peak) {
  const index::TraceIndex& idx = session.index();
  RETURN_IF_ERROR(CheckPid(idx, request.pid));
  Selection out;
  out.pid = request.pid;
  out.processes = request.pid ? ProcessesOf(idx, request.pid) : DefaultProcesses(session);
  if (!request.pid) {
    const size_t all = idx.num_processes();
    if (out.processes.size() < all) {
      out.notes.push_back(absl::StrFormat(
          "note: a system-wide recording: the %u process entries with memory calls are shown, not the %u "
          "others perf listed at its start (--pid PID shows any one)",
          out.processes.size(), all - out.processes.size()));
    }
  }
  ASSIGN_OR_RETURN(out.at, ResolveMoment(request.at, idx, out.processes, peak, session.Reached()));
  if (request.at.kind == TimeSpec::Kind::kEnd) {
    if (std::optional<std::string> note = TeardownNote(idx, out.processes)) out.notes.push_back(*note);
  }
  return out;
}

}  // namespace pageblame::session

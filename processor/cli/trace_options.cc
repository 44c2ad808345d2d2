#include "processor/cli/trace_options.h"

#include <cstdio>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "processor/base/status_macros.h"
#include "processor/cli/damage_warnings.h"
#include "processor/cli/usage.h"
#include "processor/report/bytes_timeline.h"
#include "processor/report/libc_cut.h"
#include "processor/report/syscall_format.h"

namespace pageblame::cli {
namespace {
// The trace loaded with -v, for PrintSymbolStats on the way out.
const replay::LoadedTrace* verbose_trace = nullptr;
// -v's line about --call-graph dwarf stacks: how many samples were unwound,
// how each frame was found, why each stack ended, how the caches did.
void PrintUnwindStats(const unwind::UnwindStats& u) {
  auto ull = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  const uint64_t lookups = u.rule_hits + u.rule_misses;
  std::fprintf(stderr,
               "  unwinding: %llu samples unwound in %.1f ms, %llu frames (%llu callers by CFI, "
               "%llu by frame pointer; %llu frames in JIT code); stops: %llu at the outermost "
               "frame, %llu no module, %llu no CFI, %llu stack copy exhausted, %llu bad read, "
               "%llu caller not above callee, %llu depth limit; not unwound: %llu without "
               "registers, %llu other abi, %llu mask without ip/sp; %llu cut stack copies; %llu "
               "waited for mapping records later in the file (%llu read again from it, %llu "
               "unreadable then, at most %.1f MiB held); CFI rules %llu from the cache, "
               "%llu computed (%.1f%% hits), %.1f KiB; %llu ELF files read, %llu not found or "
               "not ELF\n",
               ull(u.samples), u.nanos / 1e6, ull(u.frames), ull(u.frames_cfi), ull(u.frames_fp),
               ull(u.frames_jit), ull(u.stop_end), ull(u.stop_no_module), ull(u.stop_no_cfi),
               ull(u.stop_stack_end), ull(u.stop_bad_read), ull(u.stop_not_above),
               ull(u.stop_max_depth), ull(u.no_registers), ull(u.other_abi),
               ull(u.mask_lacks_ip_sp), ull(u.cut_copies), ull(u.waited), ull(u.waited_reread),
               ull(u.waited_lost),
               u.waited_max_bytes / 1048576.0, ull(u.rule_hits),
               ull(u.rule_misses),
               lookups ? 100.0 * u.rule_hits / lookups : 0.0, u.cache_bytes / 1024.0,
               ull(u.files_opened), ull(u.files_missing));
}

}  // namespace

absl::StatusOr<TraceSelection> ParseSelection(const Args& args) {
  TraceSelection sel;
  if (auto pid = args.Value("--pid")) {
    uint32_t v;
    if (!absl::SimpleAtoi(*pid, &v)) {
      return UsageError(absl::StrCat("bad --pid '", *pid, "': expected a number"));
    }
    sel.pid = v;
  }
  if (auto at = args.Value("--at")) {
    ASSIGN_OR_RETURN(sel.at, ParseTimeSpec(*at));
  }
  return sel;
}

namespace {

std::string PidList(const index::TraceIndex& idx) {
  std::set<uint32_t> pids;
  for (uint32_t p = 0; p < idx.num_processes(); ++p) pids.insert(idx.process(p).pid);
  return absl::StrJoin(pids, ", ");
}

// The processes --pid selects (all without it).
std::vector<uint32_t> Selected(const index::TraceIndex& idx, std::optional<uint32_t> pid) {
  if (pid) return idx.ProcessesWithPid(*pid);
  std::vector<uint32_t> all;
  for (uint32_t p = 0; p < idx.num_processes(); ++p) all.push_back(p);
  return all;
}

// A process that exited having unmapped most of what it had (a program
// started under perf tears its memory down before it exits): at the end
// there is little to ask about. Said once, with the command that helps.
void NoteTeardown(const replay::LoadedTrace& trace, const std::vector<uint32_t>& procs) {
  const index::TraceIndex& idx = trace.index();
  for (uint32_t p : procs) {
    const index::Process& proc = idx.process(p);
    if (proc.t_exit == index::kLive) continue;
    // Only since its last exec: what it held before was another program's.
    const index::MappedTally::Point peak = proc.mapped.Peak();
    const uint64_t end = proc.mapped.now();
    constexpr uint64_t kWorthSaying = 1 << 20;
    if (peak.bytes < end + kWorthSaying || end * 2 > peak.bytes) continue;
    std::fprintf(stderr,
                 "pageblame: note: pid %u (%s) exited holding %s of the %s it had mapped at its "
                 "peak (%s): at the end of the trace its memory was already unmapped; to see it: "
                 "--pid %u --at peak\n",
                 proc.pid, std::string(idx.strings().Get(proc.comm)).c_str(),
                 report::HumanBytes(end).c_str(), report::HumanBytes(peak.bytes).c_str(),
                 report::FormatTime(peak.time).c_str(), proc.pid);
    return;
  }
}

}  // namespace

absl::StatusOr<Selection> Resolve(const TraceSelection& sel, const replay::LoadedTrace& trace,
                                  bool by_commit) {
  const index::TraceIndex& idx = trace.index();
  if (sel.pid && idx.ProcessesWithPid(*sel.pid).empty()) {
    return UsageError(absl::StrCat("no process with pid ", *sel.pid, " in the trace (its pids: ",
                                   PidList(idx), ")"));
  }
  const std::vector<uint32_t> procs = Selected(idx, sel.pid);
  Selection out;
  out.pid = sel.pid;
  ASSIGN_OR_RETURN(out.at, ResolveTime(sel.at, idx, [&] {
                     return report::BytesTimeline::Of(idx, procs).Peak(by_commit).time;
                   }));
  if (sel.at.kind == TimeSpec::Kind::kEnd) NoteTeardown(trace, procs);
  return out;
}

absl::StatusOr<const replay::LoadedTrace*> LoadFromArgs(const Args& args) {
  replay::LoadOptions o;
  o.path = args.Value("--input").value_or("perf.data");
  o.symbols.trace_path = o.path;
  o.symbols.symfs = args.Value("--symfs").value_or("");
  o.symbols.inline_frames = !args.Has("--no-inline");
  o.symbols.perf_map_dir = args.Value("--perf-map-dir").value_or("");
  // perf's -f: side files another user could have written are used anyway.
  o.symbols.force = args.Has("--force");
  // perf's --buildid-dir: the build-id cache to use instead of ~/.debug.
  o.symbols.debug_dir = args.Value("--buildid-dir").value_or("");
  o.progress = true;
  o.time_unwinding = args.Has("--verbose");
  ASSIGN_OR_RETURN(auto trace, replay::LoadTrace(o));
  if (args.Has("--verbose")) {
    const index::TraceStats& s = trace->index().stats();
    std::fprintf(stderr,
                 "pageblame: %s: %llu records, %llu samples (%llu memory-syscall, %llu skipped "
                 "unparsed), %llu calls "
                 "(%llu failed, %llu no change), %zu processes, %zu regions versions, %zu unique "
                 "stacks; index %.1f MiB\n  sources: %s\n  unmatched exits %llu, unmatched enters %llu, pending "
                 "at end %llu, unknown records %llu, bad samples %llu, bad records %llu, impossible calls %llu, out of order %llu, concurrent unmaps "
                 "reordered %llu; time order by %s\n",
                 o.path.c_str(), (unsigned long long)s.records, (unsigned long long)s.samples,
                 (unsigned long long)s.memory_samples, (unsigned long long)s.skipped_samples,
                 (unsigned long long)s.calls,
                 (unsigned long long)s.calls_failed, (unsigned long long)s.calls_no_change,
                 trace->index().num_processes(), trace->index().num_versions(),
                 trace->index().stacks().size(), trace->index().MemoryBytes() / 1048576.0,
                 trace->sources().c_str(),
                 (unsigned long long)s.unmatched_exits, (unsigned long long)s.unmatched_enters,
                 (unsigned long long)s.pending_at_end, (unsigned long long)s.unknown_records,
                 (unsigned long long)s.bad_samples, (unsigned long long)s.bad_records,
                 (unsigned long long)s.impossible_calls, (unsigned long long)s.out_of_order,
                 (unsigned long long)s.unmaps_reordered,
                 s.time_order_by_rounds ? "perf's rounds" : "CPU lanes");
    if (const unwind::UnwindStats* u = trace->unwind_stats()) PrintUnwindStats(*u);
  }
  // Answers for 32-bit processes would be wrong: say so instead.
  for (uint32_t p = 0; p < trace->index().num_processes(); ++p) {
    const index::Process& proc = trace->index().process(p);
    if (proc.is_32bit) {
      std::fprintf(stderr, "pageblame: warning: pid %u (%s) is a 32-bit program: the kernel "
                   "fires no syscalls:* events for its calls and raw_syscalls carry i386 numbers, "
                   "so its memory changes are not replayed (%llu calls skipped)\n",
                   proc.pid, std::string(trace->index().strings().Get(proc.comm)).c_str(),
                   (unsigned long long)trace->index().stats().calls_32bit);
    }
  }
  // Lost events make answers about the affected span uncertain: always say so.
  for (const index::LostSpan& l : trace->index().stats().lost) {
    std::fprintf(stderr, "pageblame: warning: %llu %s lost between %s and %s; pages changed then "
                 "may be misattributed\n",
                 (unsigned long long)l.count, l.samples ? "samples" : "events",
                 report::FormatTime(l.t_from).c_str(), report::FormatTime(l.t_to).c_str());
  }
  WarnAboutDamage(trace->index().stats());
  // A frame-pointer trace whose stacks stop in libc names no caller: say so
  // once, with the recording that fixes it.
  if (trace->unwind_stats() == nullptr) {
    if (report::LibcCut cut = report::FindLibcCut(*trace); cut.Mostly()) {
      std::fputs(report::LibcCutHint(cut).c_str(), stderr);
    }
  }
  static std::unique_ptr<replay::LoadedTrace> kept;  // see the header: never freed
  kept = std::move(trace);
  if (args.Has("--verbose")) verbose_trace = kept.get();
  return kept.get();
}

void PrintSymbolStats() {
  if (verbose_trace == nullptr) return;
  // Not tables_preloaded: which tables were loaded ahead depends on timing,
  // and the rest of -v is the same on every run.
  const symbols::SymbolizerStats s = verbose_trace->symbolizer().stats();
  std::string missing;
  constexpr size_t kNamed = 5;
  for (size_t i = 0; i < s.missing_dsos.size() && i < kNamed; ++i) {
    absl::StrAppend(&missing, i == 0 ? ": " : ", ", s.missing_dsos[i]);
  }
  if (s.missing_dsos.size() > kNamed) {
    absl::StrAppend(&missing, " and ", s.missing_dsos.size() - kNamed, " more");
  }
  std::fprintf(stderr,
               "pageblame: symbols: %llu frames looked up (%llu from the cache), %llu resolved, "
               "%llu in no known mapping, %llu from perf maps; %llu ELF files read (%llu separate "
               "debug files), %llu unreadable, %llu candidates of another build; perf maps: %llu "
               "read, %llu missing; %llu inlined frames (DWARF of %llu files read); %llu DSOs "
               "not found%s\n",
               (unsigned long long)s.lookups, (unsigned long long)s.cache_hits,
               (unsigned long long)s.resolved, (unsigned long long)s.no_mapping,
               (unsigned long long)s.jit_frames, (unsigned long long)s.elfs_loaded,
               (unsigned long long)s.debug_files_loaded, (unsigned long long)s.elfs_bad,
               (unsigned long long)s.build_id_mismatches, (unsigned long long)s.perf_maps_loaded,
               (unsigned long long)s.perf_maps_missing, (unsigned long long)s.inlined_frames,
               (unsigned long long)s.debug_info_read, (unsigned long long)s.dsos_missing,
               missing.c_str());
}

}  // namespace pageblame::cli

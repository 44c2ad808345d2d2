#include "processor/cli/trace_options.h"

#include <cstdio>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "processor/base/status_macros.h"
#include "processor/base/text_escape.h"
#include "processor/cli/usage.h"

namespace pageblame::cli {
namespace {
// The trace loaded with -v, for PrintSymbolStats on the way out.
const session::Session* verbose_trace = nullptr;
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
  if (u.files_cfi_refused > 0) {
    std::fprintf(stderr, "  unwinding: CFI refused in %llu files (frame pointers there); first: %s\n",
                 ull(u.files_cfi_refused), EscapeName(u.first_cfi_refused).c_str());
  }
}

}  // namespace

absl::StatusOr<SelectionRequest> ParseSelection(const Args& args) {
  SelectionRequest sel;
  if (auto pid = args.Value("--pid")) {
    uint32_t v;
    if (!absl::SimpleAtoi(*pid, &v)) {
      return UsageError(absl::StrCat("bad --pid '", *pid, "': expected a number"));
    }
    sel.pid = v;
  }
  if (auto at = args.Value("--at")) {
    ASSIGN_OR_RETURN(sel.at, session::ParseTimeSpec(*at));
  }
  return sel;
}

absl::StatusOr<analysis::SummaryOptions> ParseFrames(const Args& args) {
  analysis::SummaryOptions o;
  const std::string frames = args.Value("--frames").value_or("app");
  if (frames == "app") {
    o.style = analysis::SummaryStyle::kApp;
  } else if (frames == "all") {
    o.style = analysis::SummaryStyle::kAll;
  } else {
    return UsageError(absl::StrCat("bad --frames '", frames, "': expected app or all"));
  }
  if (auto hide = args.Value("--hide")) {
    auto re = analysis::CompileHide(*hide);
    if (!re.ok()) return UsageError(std::string(re.status().message()));
    o.hide = *std::move(re);
  }
  return o;
}

absl::StatusOr<analysis::GroupBy> ParseGroup(const Args& args) {
  const std::string group = args.Value("--group").value_or("method");
  if (group == "method") return analysis::GroupBy::kMethod;
  if (group == "stack") return analysis::GroupBy::kStack;
  return UsageError(absl::StrCat("bad --group '", group, "': expected method or stack"));
}

absl::StatusOr<std::vector<analysis::RegionKind>> ParseKindFilter(const Args& args) {
  auto list = args.Value("--kind");
  if (!list) return std::vector<analysis::RegionKind>{};
  auto kinds = analysis::ParseKinds(*list);
  if (!kinds.ok()) return UsageError(absl::StrCat("bad --kind: ", kinds.status().message()));
  return kinds;
}

absl::StatusOr<Selection> Resolve(const SelectionRequest& sel, const session::Session& trace,
                                  bool by_commit) {
  ASSIGN_OR_RETURN(Selection out, session::Resolve(sel, trace, by_commit ? session::PeakOf::kCommitted
                                                                         : session::PeakOf::kMapped));
  for (const std::string& note : out.notes) std::fprintf(stderr, "pageblame: %s\n", EscapeName(note).c_str());
  return out;
}

absl::StatusOr<std::optional<analysis::RankBy>> ParseSort(const Args& args) {
  const std::optional<std::string> sort = args.Value("--sort");
  if (!sort) return std::nullopt;
  if (auto by = analysis::ParseRankBy(*sort)) return by;
  return UsageError(absl::StrCat("bad --sort '", *sort, "': expected rss, committed or mapped"));
}

analysis::RankBy Ranking(std::optional<analysis::RankBy> asked, const residency::ResidencyIndex* rss) {
  if (asked) return *asked;
  return rss != nullptr && rss->size() > 0 ? analysis::RankBy::kResident : analysis::RankBy::kCommitted;
}

absl::StatusOr<session::SessionOptions> SessionOptionsFromArgs(const Args& args, bool rss_required) {
  session::SessionOptions o;
  o.path = InputPath(args);
  o.symbols.symfs = args.Value("--symfs").value_or("");
  o.symbols.inline_frames = !args.Has("--no-inline");
  o.symbols.perf_map_dir = args.Value("--perf-map-dir").value_or("");
  o.symbols.verbose = args.Has("--verbose");
  // perf's --buildid-dir: the build-id cache to use instead of ~/.debug.
  o.symbols.debug_dir = args.Value("--buildid-dir").value_or("");
  // perf's -f: side files another user could have written are used anyway.
  o.force = args.Has("--force");
  o.residency.path = args.Value("--rss");
  o.residency.off = args.Has("--no-rss");
  o.residency.required = rss_required;
  if (o.residency.off && (o.residency.path || rss_required)) {
    return UsageError(o.residency.path ? "--no-rss contradicts --rss"
                                       : "--no-rss contradicts an answer in resident bytes");
  }
  o.progress = true;
  o.time_unwinding = args.Has("--verbose");
  o.use_index = o.write_index = !args.Has("--no-index");
  return o;
}

std::string InputPath(const Args& args) { return args.Value("--input").value_or(session::kDefaultTracePath); }

absl::StatusOr<const session::Session*> LoadFromArgs(const Args& args, bool rss_required, session::HeapRequest heap) {
  ASSIGN_OR_RETURN(session::SessionOptions o, SessionOptionsFromArgs(args, rss_required));
  o.heap = heap;
  ASSIGN_OR_RETURN(std::unique_ptr<session::Session> trace, session::Session::Open(o));
  if (args.Has("--verbose")) {
    if (!trace->load_note().empty()) {
      std::fprintf(stderr, "pageblame: %s: %s\n", EscapeName(trace->path()).c_str(),
                   EscapeName(trace->load_note()).c_str());
    }
    const index::TraceStats& s = trace->index().stats();
    std::fprintf(stderr,
                 "pageblame: %s: %llu records, %llu samples (%llu memory-syscall, %llu skipped "
                 "unparsed, %llu of other syscalls), %llu calls "
                 "(%llu failed, %llu no change), %zu processes, %zu regions versions, %zu unique "
                 "stacks (%zu frames); index %.1f MiB (stacks %.1f MiB)\n  sources: %s\n  unmatched exits %llu, unmatched enters %llu, pending "
                 "at end %llu, unknown records %llu, bad samples %llu, bad records %llu, impossible calls %llu, out of order %llu, concurrent unmaps "
                 "reordered %llu; time order by %s\n",
                 EscapeName(o.path).c_str(), (unsigned long long)s.records, (unsigned long long)s.samples,
                 (unsigned long long)s.memory_samples, (unsigned long long)s.skipped_samples,
                 (unsigned long long)s.other_syscall_samples,
                 (unsigned long long)s.calls,
                 (unsigned long long)s.calls_failed, (unsigned long long)s.calls_no_change,
                 trace->index().num_processes(), trace->index().num_versions(),
                 trace->index().stacks().size(), trace->index().stacks().num_frames(),
                 trace->index().MemoryBytes() / 1048576.0, trace->index().stacks().bytes() / 1048576.0,
                 EscapeName(trace->sources()).c_str(),
                 (unsigned long long)s.unmatched_exits, (unsigned long long)s.unmatched_enters,
                 (unsigned long long)s.pending_at_end, (unsigned long long)s.unknown_records,
                 (unsigned long long)s.bad_samples, (unsigned long long)s.bad_records,
                 (unsigned long long)s.impossible_calls, (unsigned long long)s.out_of_order,
                 (unsigned long long)s.unmaps_reordered,
                 s.time_order_by_rounds ? "perf's rounds" : "CPU lanes");
    if (const unwind::UnwindStats* u = trace->unwind_stats()) PrintUnwindStats(*u);
    if (std::string a = trace->AttachMapsNote(); !a.empty()) std::fprintf(stderr, "pageblame: %s\n", a.c_str());
  }
  // Each warning is one line; some quote the trace (a comm, why a record
  // could not be parsed): escaped whole, as every message (ReportError).
  for (const std::string& w : trace->warnings()) std::fprintf(stderr, "pageblame: %s\n", EscapeName(w).c_str());
  if (const residency::ResidencyIndex* rss = trace->residency(); rss != nullptr && args.Has("--verbose")) {
    std::fprintf(stderr, "pageblame: %s: %zu residency snapshots\n", EscapeName(rss->path()).c_str(), rss->size());
  }
  static std::unique_ptr<session::Session> kept;  // see the header: never freed
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
    absl::StrAppend(&missing, i == 0 ? ": " : ", ", EscapeName(s.missing_dsos[i]));
  }
  if (s.missing_dsos.size() > kNamed) {
    absl::StrAppend(&missing, " and ", s.missing_dsos.size() - kNamed, " more");
  }
  std::string pe;
  for (size_t i = 0; i < s.pe_images.size() && i < kNamed; ++i) {
    absl::StrAppend(&pe, i == 0 ? ": " : ", ", EscapeName(s.pe_images[i]));
  }
  if (s.pe_images.size() > kNamed) absl::StrAppend(&pe, " and ", s.pe_images.size() - kNamed, " more");
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
  // .NET assemblies are PE files: their ReadyToRun code is named by the
  // runtime's jitdump, not by an ELF file that is missing.
  if (!s.pe_images.empty() || s.jitdumps_loaded > 0) {
    std::fprintf(stderr,
                 "pageblame: symbols: jitdumps: %llu read, %llu frames named from them; %zu PE images "
                 "(.NET assemblies, no ELF: ReadyToRun code named by the jitdump)%s\n",
                 (unsigned long long)s.jitdumps_loaded, (unsigned long long)s.jitdump_frames,
                 s.pe_images.size(), pe.c_str());
  }
  for (const std::string& refused : s.debug_info_refused) {
    std::fprintf(stderr, "pageblame: symbols: DWARF not read: %s\n", EscapeName(refused).c_str());
  }
}

}  // namespace pageblame::cli

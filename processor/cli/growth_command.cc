#include <cstdio>

#include "absl/strings/str_cat.h"
#include "processor/index/bytes_timeline.h"
#include "processor/analysis/growth_methods.h"
#include "processor/analysis/growth_report.h"
#include "processor/analysis/kind_classifier.h"
#include "processor/cli/command_spec.h"
#include "processor/cli/commands.h"
#include "processor/base/status_macros.h"
#include "processor/cli/format_option.h"
#include "processor/cli/output_file.h"
#include "processor/cli/terminal_width.h"
#include "processor/cli/trace_options.h"
#include "processor/cli/usage.h"
#include "processor/render/growth_render.h"
#include "processor/render/maps_report.h"
#include "processor/render/pprof_profiles.h"

namespace pageblame::cli {

const CommandSpec& GrowthSpec() {
  static const CommandSpec kSpec = [] {
    CommandSpec s;
    s.name = "growth";
    s.help = absl::StrCat(
        "usage: pageblame growth -i TRACE [--from T1] [--to T2] [--pid PID]\n"
        "                        [--by commit|create] [--kind K] [--group method|stack]\n"
        "                        [--detail] [--format text|json|folded|pprof] [-o FILE] [-v]\n"
        "What the address space gained and lost between T1 and T2, per application\n"
        "method (or, --group stack, per call stack): first the methods ranked by\n"
        "resident growth with residency snapshots, else committed growth (kind, a\n"
        "total), the PROT_NONE reservations apart; with --detail then each method's\n"
        "stacks, the bytes mapped at both ends, what was added, removed, and made and\n"
        "gone again in between, and every stack in full. The totals are those of\n"
        "'pageblame maps --at T1' and '--at T2'.\n"
        "  --from T1, --to T2    perf script seconds (216.083882), +S after the trace's\n"
        "                        start, -S before its end, end, or peak (when the\n"
        "                        processes had the most bytes mapped); default: the\n"
        "                        trace's start (before its first event) and its end\n"
        "  --pid PID             one process (a pid not in the trace is an error);\n"
        "                        default: every traced process, summed\n"
        "  --by commit|create    credit each page to the call that committed it (made it\n"
        "                        accessible after PROT_NONE), else the one that created\n"
        "                        it (commit, default), or always to the creating call\n"
        "  --detail              text: every stack's bytes at both ends, and its frames\n"
        "  --format text|json|folded|pprof\n"
        "                        folded: 'frames from_bytes to_bytes' lines, which\n"
        "                        flamegraph.pl draws as a differential flame graph;\n"
        "                        pprof: a gzipped profile.proto for go tool pprof,\n"
        "                        speedscope, Pyroscope (docs/cli.md); --json is\n"
        "                        --format json\n"
        "  -o, --output FILE     write the answer to FILE instead of standard output\n",
        kGroupHelp, kSortHelp, kKindHelp, kFramesHelp, kTraceInputHelp, kTraceSymbolsHelp);
    s.value_flags = kTraceValueFlags;
    s.value_flags.erase("--at");  // a range: --from and --to
    s.value_flags.insert({"--from", "--to", "--by", "--format", "--output", "--kind", "--sort", "--group"});
    s.value_flags.insert(kFramesFlags.begin(), kFramesFlags.end());
    s.bool_flags = kTraceBoolFlags;
    s.bool_flags.insert("--detail");
    s.aliases = kTraceAliases;
    s.aliases["-o"] = "--output";
    return s;
  }();
  return kSpec;
}

namespace {

int Usage(const std::string& what) { return CommandUsage(GrowthSpec(), what); }

// What the command line asked for, checked before the trace is read.
struct GrowthRequest {
  AnswerFormat format = AnswerFormat::kText;
  analysis::CreditBy by = analysis::CreditBy::kCommit;
  SelectionRequest selection;  // the pid (its time is unused)
  std::optional<session::TimeSpec> from, to;
  render::TextOptions text;
  std::vector<analysis::RegionKind> kinds;
  std::optional<analysis::RankBy> sort;  // --sort; unset: by the snapshots' presence
  analysis::GroupBy group = analysis::GroupBy::kMethod;
};

// Usage mistakes as a status (exit 2).
absl::StatusOr<GrowthRequest> ParseRequest(const Args& args) {
  GrowthRequest r;
  ASSIGN_OR_RETURN(r.format, ParseFormat(args, {AnswerFormat::kText, AnswerFormat::kJson, AnswerFormat::kFolded,
                                                 AnswerFormat::kPprof}));
  const std::string by = args.Value("--by").value_or("commit");
  if (by != "create" && by != "commit") return UsageError("bad --by '" + by + "': expected create or commit");
  r.by = by == "commit" ? analysis::CreditBy::kCommit : analysis::CreditBy::kCreate;
  auto frames = ParseFrames(args);
  if (!frames.ok()) return frames.status();
  r.text.frames = *frames;
  r.text.detail = args.Has("--detail");
  auto kinds = ParseKindFilter(args);
  if (!kinds.ok()) return kinds.status();
  r.kinds = *kinds;
  auto sort = ParseSort(args);
  if (!sort.ok()) return sort.status();
  r.sort = *sort;
  ASSIGN_OR_RETURN(r.group, ParseGroup(args));
  auto sel = ParseSelection(args);
  if (!sel.ok()) return sel.status();
  r.selection = *sel;
  for (const auto& [flag, spec] : {std::make_pair("--from", &r.from), std::make_pair("--to", &r.to)}) {
    if (auto text = args.Value(flag)) {
      auto t = session::ParseTimeSpec(*text, flag);
      if (!t.ok()) return t.status();
      *spec = *t;
    }
  }
  return r;
}

// The growth options once the trace is read: the pid is in it, both times
// resolved in it, the first not after the second.
absl::StatusOr<analysis::GrowthOptions> ResolveRange(const GrowthRequest& r, const session::Session& trace) {
  const index::TraceIndex& idx = trace.index();
  // Checks the pid (a usage error naming the trace's pids); the times are
  // resolved below, each with its own flag's name.
  SelectionRequest pid_only = r.selection;
  // (A recording thinned by record --max-size keeps no state before its cut.)
  const uint64_t thinned = idx.stats().thinned_before;
  pid_only.at = thinned ? session::TimeSpec{session::TimeSpec::Kind::kAbsolute, thinned, FormatTime(thinned)}
                        : session::TimeSpec{session::TimeSpec::Kind::kFromStart, 0, "+0"};
  const session::PeakOf peak =
      r.by == analysis::CreditBy::kCommit ? session::PeakOf::kCommitted : session::PeakOf::kMapped;
  auto checked = session::Resolve(pid_only, trace, peak);
  if (!checked.ok()) return checked.status();

  analysis::GrowthOptions o;
  o.by = r.by;
  o.processes = checked->processes;
  // No --from: before the trace's first event, so that everything the trace
  // saw happen counts as growth (thinned: from the oldest state kept).
  const uint64_t first = idx.stats().first_time;
  o.from = thinned ? thinned : first > 0 ? first - 1 : 0;
  if (r.from) {
    auto t = session::ResolveMoment(*r.from, idx, o.processes, peak, trace.Reached());
    if (!t.ok()) return t.status();
    o.from = *t;
  }
  if (r.to) {
    auto t = session::ResolveMoment(*r.to, idx, o.processes, peak, trace.Reached());
    if (!t.ok()) return t.status();
    o.to = *t;
  }
  if (o.from > o.to) {
    return UsageError(absl::StrCat("--from ", r.from ? r.from->text : "(start)", " is after --to ",
                                   r.to ? r.to->text : "(end)", ": the range must go forward in time"));
  }
  return o;
}

// The text answer, written a piece at a time as it is made (--detail: every
// stack's lines, hundreds of MB for a million stacks).
absl::Status WriteText(const GrowthRequest& r, const session::Session& trace, const analysis::Growth& g,
                       OutputFile& out) {
  render::TextOptions text = r.text;
  std::vector<analysis::MethodGrowth> methods;
  const bool by_method = r.group == analysis::GroupBy::kMethod;
  if (by_method) {
    methods = analysis::GrowthByMethod(trace.frames(), g, r.text.frames);
    text.width = TextWidth(out.is_stdout());
  }
  absl::Status written;
  render::WriteGrowthText(trace, g, by_method ? &methods : nullptr, text, [&](std::string_view piece) {
    written = out.WriteTextPiece(piece);
    return written.ok();
  });
  RETURN_IF_ERROR(written);
  return out.Close();
}

absl::Status Run(const Args& args, const GrowthRequest& request) {
  auto out = OutputFile::Open(args.Value("--output"), args.ValuesExcept("--output"));
  if (!out.ok()) return out.status();
  auto trace = LoadFromArgs(args, /*rss_required=*/request.sort == analysis::RankBy::kResident);
  if (!trace.ok()) return trace.status();
  auto options = ResolveRange(request, **trace);
  if (!options.ok()) return options.status();
  options->rss = (*trace)->residency();
  options->heap = (*trace)->heap();
  options->rank_by = Ranking(request.sort, options->rss);
  // Kinds come from the stacks, symbolized once for the answer too.
  analysis::KindClassifier classifier((*trace)->frames());
  options->kind_of = classifier.Function();
  options->kinds = request.kinds;
  auto g = analysis::ComputeGrowth((*trace)->index(), *options);
  if (!g.ok()) return g.status();
  if (request.format == AnswerFormat::kText) return WriteText(request, **trace, *g, **out);
  if (request.format == AnswerFormat::kFolded) {
    RETURN_IF_ERROR((*out)->WriteText(render::GrowthFolded(**trace, *g)));
    return (*out)->Close();
  }
  // JSON and pprof are streamed: a stack's object (or sample) at a time, as
  // maps --json writes its regions.
  const std::vector<analysis::MethodGrowth> methods =
      analysis::GrowthByMethod((*trace)->frames(), *g, request.text.frames);
  const bool written = request.format == AnswerFormat::kJson
                           ? render::WriteGrowthJson(**trace, *g, methods, (*out)->stream())
                           : render::WriteGrowthPprof(**trace, *g, methods, (*out)->stream());
  if (!written) return (*out)->WriteError();
  return (*out)->Close();
}

}  // namespace

int RunGrowth(const std::vector<std::string>& argv) {
  int rc = 0;
  std::optional<Args> args = ParseCommand(GrowthSpec(), argv, &rc);
  if (!args) return rc;
  absl::StatusOr<GrowthRequest> request = ParseRequest(*args);
  if (!request.ok()) return Usage(std::string(request.status().message()));
  absl::Status s = Run(*args, *request);
  return s.ok() ? kExitOk : ReportError(s);
}

}  // namespace pageblame::cli

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "processor/analysis/attribute_report.h"
#include "processor/index/bytes_timeline.h"
#include "processor/analysis/kind_classifier.h"
#include "processor/analysis/report_analysis.h"
#include "processor/base/format.h"
#include "processor/base/text_escape.h"
#include "processor/cli/command_spec.h"
#include "processor/cli/commands.h"
#include "processor/cli/output_file.h"
#include "processor/cli/trace_options.h"
#include "processor/cli/usage.h"
#include "processor/regions/region.h"
#include "processor/render/html_page.h"
#include "processor/render/report_data.h"

namespace pageblame::cli {

const CommandSpec& ReportSpec() {
  static const CommandSpec kSpec = [] {
    CommandSpec s;
    s.name = "report";
    s.help = absl::StrCat(
        "usage: pageblame report -i TRACE -o FILE.html [--pid PID] [--at T]\n"
        "                        [--regions FILE | --address A --maddress M |\n"
        "                         --unaccounted [--maddress M]] [-v]\n"
        "One self-contained HTML page (it opens offline: nothing is fetched) about one\n"
        "process: committed bytes over time by stack (PROT_NONE reservations as an\n"
        "optional band; resident bytes from the residency snapshots, when the trace\n"
        "has them), with the growth of any time range you pick; a flame graph of the\n"
        "live bytes at T; the address space at T, region by region, shaded by its\n"
        "resident pages; with a region table or a diff, its bytes by stack\n"
        "(docs/report.md).\n"
        "  -o, --output FILE     the page to write (required)\n"
        "  --regions FILE        a region table to attribute, as for pageblame attribute\n"
        "  --address A --maddress M\n"
        "                        the unaccounted pieces of 'pageblame diff A M'\n"
        "  --unaccounted         a .NET process's memory its runtime table does not own,\n"
        "                        from the trace alone, as for pageblame attribute\n"
        "  (without --pid, a trace of several processes shows the one with the most\n"
        "  bytes committed at its peak, and says so)\n",
        kFramesHelp,
        // The answer is a page: no --json.
        absl::StrReplaceAll(kTraceOptionsHelp, {{"  --json                JSON output (docs/cli.md)\n", ""}}));
    s.value_flags = kTraceValueFlags;
    s.value_flags.insert({"--output", "--regions", "--address", "--maddress"});
    s.value_flags.insert(kFramesFlags.begin(), kFramesFlags.end());
    s.bool_flags = kTraceBoolFlags;
    s.bool_flags.erase("--json");  // the answer is a page
    s.bool_flags.insert("--unaccounted");
    s.aliases = kTraceAliases;
    s.aliases["-o"] = "--output";
    return s;
  }();
  return kSpec;
}

namespace {

// The process the page is about: the one --pid or the regions choose (as
// attribute chooses), else the trace's only one, else the one with the most
// bytes committed at its peak (noted on stderr): a runtime's PROT_NONE
// reservation is no reason to show a process.
absl::StatusOr<uint32_t> ChooseReportProcess(const index::TraceIndex& idx, const Selection& sel,
                                             const std::vector<regions::Region>& regions) {
  if (sel.pid || !regions.empty() || idx.num_processes() <= 1) {
    analysis::AttributeOptions o;
    o.pid = sel.pid;
    o.at = sel.at;
    return analysis::ChooseProcess(idx, regions, o);
  }
  std::vector<uint32_t> all;
  for (uint32_t p = 0; p < idx.num_processes(); ++p) all.push_back(p);
  const std::vector<index::BytesTimeline> timelines = index::BytesTimeline::OfEach(idx, all);
  uint32_t best = 0;
  for (uint32_t p = 1; p < all.size(); ++p) {
    if (timelines[p].Peak(true).committed > timelines[best].Peak(true).committed) best = p;
  }
  const index::Process& proc = idx.process(best);
  std::fprintf(stderr,
               "pageblame: note: the trace has %zu processes; the report shows pid %u (%s), which had the "
               "most bytes committed (%s at its peak); choose another with --pid\n",
               all.size(), proc.pid, EscapeName(idx.strings().Get(proc.comm)).c_str(),
               HumanBytes(timelines[best].Peak(true).committed).c_str());
  return best;
}

// What the page shows of `process` at `at`, computed.
analysis::ReportAnalysis AnalyzeForPage(const session::Session& trace, uint32_t process, uint64_t at,
                                      const residency::ResidencyIndex* rss, const analysis::KindFunction& kind_of) {
  analysis::ReportQuery q;
  q.process = process;
  q.at = at;
  q.rss = rss;
  q.heap = trace.heap();
  q.kind_of = kind_of;
  return analysis::AnalyzeReport(trace.index(), q);
}

}  // namespace

int RunReport(const std::vector<std::string>& argv) {
  int rc = 0;
  std::optional<Args> args = ParseCommand(ReportSpec(), argv, &rc);
  if (!args) return rc;
  if (!args->Value("--output")) return CommandUsage(ReportSpec(), "give the page to write with -o FILE.html");
  auto sel = ParseSelection(*args);
  if (!sel.ok()) return ReportError(sel.status());
  auto frames = ParseFrames(*args);
  if (!frames.ok()) return CommandUsage(ReportSpec(), std::string(frames.status().message()));
  std::vector<regions::Region> regions;
  const bool unaccounted = args->Has("--unaccounted");
  const bool with_regions =
      unaccounted || args->Value("--regions") || args->Value("--address") || args->Value("--maddress");
  if (with_regions) {
    std::optional<std::vector<regions::Region>> read = ReadRegionsFromArgs(ReportSpec(), *args, &rc);
    if (!read) return rc;
    regions = std::move(*read);
  }
  auto out = OutputFile::Open(args->Value("--output"), args->ValuesExcept("--output"));
  if (!out.ok()) return ReportError(out.status());
  auto trace = LoadFromArgs(*args);
  if (!trace.ok()) return ReportError(trace.status());
  const residency::ResidencyIndex* rss = (*trace)->residency();
  auto resolved = Resolve(*sel, **trace, /*by_commit=*/false);
  if (!resolved.ok()) return ReportError(resolved.status());
  const index::TraceIndex& idx = (*trace)->index();
  if (idx.num_processes() == 0) return ReportError(absl::InvalidArgumentError("the trace has no processes"));
  std::string unaccounted_title;
  if (unaccounted) {
    auto u = RegionsFromTrace(*args, **trace, &*resolved);
    if (!u.ok()) return ReportError(u.status());
    regions = std::move(u->pieces);
    unaccounted_title = absl::StrCat("pid ", u->pid, "'s memory not in the runtime's table ", u->table);
  }
  auto process = ChooseReportProcess(idx, *resolved, regions);
  if (!process.ok()) return ReportError(process.status());

  render::ReportOptions o;
  o.title = InputPath(*args);
  o.frames = *frames;
  // Kinds come from the stacks, symbolized once here for the whole page.
  analysis::KindClassifier classifier((*trace)->frames());
  if (with_regions) {
    analysis::AttributeOptions ao;
    ao.pid = idx.process(*process).pid;
    ao.at = resolved->at;
    // As attribute: kinds (arena rows, their ranking) and the split of
    // arena bytes into in use and free from the heap snapshots.
    ao.kind_of = classifier.Function();
    ao.heap = (*trace)->heap();
    auto a = analysis::Attribute(idx, regions, ao);
    if (!a.ok()) return ReportError(a.status());
    o.attribution = std::move(*a);
    o.attribution_title = unaccounted ? unaccounted_title
                          : args->Value("--regions")
                              ? *args->Value("--regions")
                              : absl::StrCat(*args->Value("--address"), " minus ", *args->Value("--maddress"));
  }
  const analysis::ReportAnalysis analysis = AnalyzeForPage(**trace, *process, resolved->at, rss, classifier.Function());
  absl::Status written = (*out)->Write(render::HtmlPage(render::ReportData(**trace, o, analysis)));
  if (written.ok()) written = (*out)->Close();
  return written.ok() ? 0 : ReportError(written);
}

}  // namespace pageblame::cli

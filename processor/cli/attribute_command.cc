#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "processor/analysis/attribute_report.h"
#include "processor/analysis/attribution_methods.h"
#include "processor/analysis/kind_classifier.h"
#include "processor/base/format.h"
#include "processor/base/text_escape.h"
#include "processor/cli/command_spec.h"
#include "processor/cli/commands.h"
#include "processor/cli/format_option.h"
#include "processor/cli/output_file.h"
#include "processor/cli/terminal_width.h"
#include "processor/cli/trace_options.h"
#include "processor/cli/usage.h"
#include "processor/regions/page_diff.h"
#include "processor/regions/region_merger.h"
#include "processor/regions/region_table_reader.h"
#include "processor/render/attribute_render.h"
#include "processor/render/diff_report.h"
#include "processor/render/folded_stacks.h"
#include "processor/render/pprof_profiles.h"

namespace pageblame::cli {

const CommandSpec& AttributeSpec() {
  static const CommandSpec kSpec = [] {
    CommandSpec s;
    s.name = "attribute";
    s.help = absl::StrCat(
        "usage: pageblame attribute -i TRACE (--regions FILE | --address A --maddress M |\n"
        "                           --unaccounted [--maddress M])\n"
        "                           [--pid PID] [--at T] [--by commit|create] [--kind K]\n"
        "                           [--group method|stack] [--detail]\n"
        "                           [--format text|json|folded|pprof] [-o FILE] [-v]\n"
        "Who made the regions' bytes in process PID at time T: first the application's\n"
        "methods (or, --group stack, the call stacks) ranked by resident bytes with\n"
        "residency snapshots, else committed bytes (kind, a total), the PROT_NONE\n"
        "reservations apart; with --detail then each method's stacks, each region\n"
        "(its stacks, the bytes from before the trace and not mapped) and every\n"
        "stack in full.\n"
        "  --regions FILE        any region table pageblame diff reads (WinDbg !address,\n"
        "                        SOS maddress, page-diff result, pmap -X/-XX, /proc maps\n"
        "                        or smaps, address/range list, ELF core file); free rows\n"
        "                        are left out, rows that share bytes are merged (stderr\n"
        "                        says so)\n"
        "  --address A --maddress M\n"
        "                        the unaccounted pieces of 'pageblame diff A M'\n"
        "  --unaccounted         the process's memory the .NET runtime does not own, from\n"
        "                        the trace alone: its mappings as replayed at the moment\n"
        "                        of the runtime table record saved (the latest at or\n"
        "                        before --at), minus that table; --maddress M: minus M,\n"
        "                        at --at\n"
        "  --format text|json|folded|pprof\n"
        "                        folded: flame-graph input (flamegraph.pl, inferno,\n"
        "                        speedscope), bytes as the count; pprof: a gzipped\n"
        "                        profile.proto (go tool pprof, speedscope, Pyroscope);\n"
        "                        --json is --format json\n"
        "  -o, --output FILE     write the answer to FILE instead of standard output\n"
        "  --by commit|create    credit each page to the call that committed it (made it\n"
        "                        accessible after PROT_NONE), else the one that created\n"
        "                        it (commit, default), or always to the creating call\n"
        "  --detail              text: the per-region listing and the full stacks too\n",
        kGroupHelp, kSortHelp, kKindHelp, kFramesHelp, kTraceOptionsHelp);
    s.value_flags = kTraceValueFlags;
    s.value_flags.insert({"--regions", "--address", "--maddress", "--format", "--by", "--output", "--kind", "--sort",
                          "--group"});
    s.value_flags.insert(kFramesFlags.begin(), kFramesFlags.end());
    s.bool_flags = kTraceBoolFlags;
    s.bool_flags.insert({"--detail", "--unaccounted"});
    s.aliases = kTraceAliases;
    s.aliases["-o"] = "--output";
    return s;
  }();
  return kSpec;
}

namespace {

// "FILE: 3 rows share bytes with other rows (lines 1, 2, 3): ..." on stderr.
void PrintOverlap(const regions::MergedRegions& m, const std::string& name) {
  if (m.merged_regions == 0) return;
  std::vector<int> lines;
  for (const regions::Region& r : m.regions) {
    if (r.merged_lines.empty()) continue;
    lines.push_back(r.line);
    lines.insert(lines.end(), r.merged_lines.begin(), r.merged_lines.end());
  }
  constexpr size_t kShown = 6;
  std::string shown = absl::StrJoin(lines.begin(), lines.begin() + std::min(kShown, lines.size()), ", ");
  if (lines.size() > kShown) absl::StrAppend(&shown, ", ...");
  std::fprintf(stderr,
               "pageblame: %s: %d rows share bytes with other rows (lines %s): %s bytes are listed "
               "more than once; each is attributed once (%d merged %s)\n",
               EscapeName(name).c_str(), m.overlapping_rows, shown.c_str(), render::GroupedNumber(m.overlap_bytes).c_str(),
               m.merged_regions, m.merged_regions == 1 ? "region" : "regions");
}

int Usage(const std::string& what) { return CommandUsage(AttributeSpec(), what); }

// Where the regions of --unaccounted come from, and how much they are.
void SayUnaccounted(const session::Unaccounted& u) {
  std::fprintf(stderr,
               "pageblame: pid %u at %s: %s of its %s accessible memory is not in the runtime's table (%s%s)\n",
               u.pid, FormatTime(u.time).c_str(), HumanBytes(u.bytes).c_str(),
               HumanBytes(u.committed).c_str(), EscapeName(u.table).c_str(),
               u.saved ? ", saved by record then" : "");
}

}  // namespace

std::optional<std::vector<regions::Region>> ReadRegionsFromArgs(const CommandSpec& spec, const Args& args,
                                                                int* rc) {
  auto table = args.Value("--regions");
  auto address = args.Value("--address");
  auto maddress = args.Value("--maddress");
  if (args.Has("--unaccounted")) {
    if (table || address) {
      *rc = CommandUsage(spec, "--unaccounted takes the regions from the trace: not with --regions or --address");
      return std::nullopt;
    }
    return std::vector<regions::Region>();  // RegionsFromTrace, once the trace is loaded
  }
  if (table && (address || maddress)) {
    *rc = CommandUsage(spec, "give either --regions or --address/--maddress, not both");
    return std::nullopt;
  }
  if (table) {
    auto t = regions::RegionTableReader::DetectAndParse(*table);
    if (!t.ok()) return *rc = ReportError(t.status()), std::nullopt;
    PrintSkipped(*t, *table);
    // Free rows (WinDbg lists the gaps) are no memory: leave them out.
    std::vector<regions::Region> claimed;
    for (const regions::Region& r : t->regions) {
      if (t->IsClaimed(r)) claimed.push_back(r);
    }
    // A byte listed twice is still one byte: merge, and say so.
    regions::MergedRegions merged = regions::RegionMerger::Merge(claimed);
    PrintOverlap(merged, *table);
    return std::move(merged.regions);
  }
  if (!address || !maddress) {
    *rc = CommandUsage(spec, address || maddress ? "--address and --maddress go together"
                                    : "no regions: give --regions FILE or --address A --maddress M");
    return std::nullopt;
  }
  auto a = regions::RegionTableReader::DetectAndParse(*address);
  if (!a.ok()) return *rc = ReportError(a.status()), std::nullopt;
  auto m = regions::RegionTableReader::DetectAndParse(*maddress);
  if (!m.ok()) return *rc = ReportError(m.status()), std::nullopt;
  PrintSkipped(*a, *address);
  PrintSkipped(*m, *maddress);
  return regions::Diff(*a, *m).unaccounted.pieces.ToVector();
}

absl::StatusOr<session::Unaccounted> RegionsFromTrace(const Args& args, const session::Session& trace,
                                                      session::Selection* selection) {
  absl::StatusOr<session::Unaccounted> u = session::UnaccountedOf(trace, *selection, args.Value("--maddress"));
  if (u.ok()) {
    selection->pid = u->pid;
    selection->at = u->time;
  }
  return u;
}

int RunAttribute(const std::vector<std::string>& argv) {
  int rc = 0;
  std::optional<Args> args = ParseCommand(AttributeSpec(), argv, &rc);
  if (!args) return rc;
  const absl::StatusOr<AnswerFormat> format = ParseFormat(
      *args, {AnswerFormat::kText, AnswerFormat::kJson, AnswerFormat::kFolded, AnswerFormat::kPprof});
  if (!format.ok()) return Usage(std::string(format.status().message()));
  const std::string by = args->Value("--by").value_or("commit");
  if (by != "create" && by != "commit") return Usage("bad --by '" + by + "': expected create or commit");
  const bool by_commit = by == "commit";
  auto frames = ParseFrames(*args);
  if (!frames.ok()) return Usage(std::string(frames.status().message()));
  auto sort = ParseSort(*args);
  if (!sort.ok()) return Usage(std::string(sort.status().message()));
  auto kinds = ParseKindFilter(*args);
  if (!kinds.ok()) return Usage(std::string(kinds.status().message()));
  auto group = ParseGroup(*args);
  if (!group.ok()) return Usage(std::string(group.status().message()));
  auto sel = ParseSelection(*args);
  if (!sel.ok()) return ReportError(sel.status());
  std::optional<std::vector<regions::Region>> regions = ReadRegionsFromArgs(AttributeSpec(), *args, &rc);
  if (!regions) return rc;
  auto out = OutputFile::Open(args->Value("--output"), args->ValuesExcept("--output"));
  if (!out.ok()) return ReportError(out.status());
  auto trace = LoadFromArgs(*args, /*rss_required=*/*sort == analysis::RankBy::kResident);
  if (!trace.ok()) return ReportError(trace.status());
  auto resolved = Resolve(*sel, **trace, by_commit);
  if (!resolved.ok()) return ReportError(resolved.status());
  const residency::ResidencyIndex* rss = (*trace)->residency();
  if (args->Has("--unaccounted")) {
    auto u = RegionsFromTrace(*args, **trace, &*resolved);
    if (!u.ok()) return ReportError(u.status());
    SayUnaccounted(*u);
    regions = std::move(u->pieces);
  }

  analysis::AttributeOptions o;
  o.Select(**trace, *resolved);
  o.rank_by = Ranking(*sort, rss);
  o.by = by_commit ? analysis::CreditBy::kCommit : analysis::CreditBy::kCreate;
  // Kinds come from the stacks, symbolized once here and kept for the answer.
  analysis::KindClassifier classifier((*trace)->frames());
  o.kind_of = classifier.Function();
  o.kinds = *kinds;
  // When it cannot choose the process (several had the bytes) it says so as
  // a usage error: the user must say which, with --pid.
  auto a = analysis::Attribute((*trace)->index(), *regions, o);
  if (!a.ok()) return ReportError(a.status());
  std::string answer;
  render::TextOptions text;
  text.frames = *frames;
  text.detail = args->Has("--detail");
  const bool by_method = *group == analysis::GroupBy::kMethod && *format == AnswerFormat::kText;
  if (*format == AnswerFormat::kJson) {
    answer = render::DumpJson(render::AttributeJson(
                 **trace, *a, analysis::AttributionByMethod((*trace)->frames(), *a, *frames))) +
             "\n";
  } else if (*format == AnswerFormat::kFolded) {
    answer = render::FoldedStacks(**trace, *a);
  } else if (*format == AnswerFormat::kPprof) {
    answer = render::AttributePprof(**trace, *a, analysis::AttributionByMethod((*trace)->frames(), *a, *frames));
  } else if (by_method) {
    text.width = TextWidth((*out)->is_stdout());
    answer = render::AttributeText(**trace, *a, analysis::AttributionByMethod((*trace)->frames(), *a, *frames), text);
  } else {
    answer = render::AttributeText(**trace, *a, text);
  }
  absl::Status written = IsText(*format) ? (*out)->WriteText(std::move(answer)) : (*out)->Write(answer);
  if (written.ok()) written = (*out)->Close();
  return written.ok() ? 0 : ReportError(written);
}

}  // namespace pageblame::cli

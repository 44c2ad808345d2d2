#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "processor/analysis/kind_classifier.h"
#include "processor/analysis/maps_answer.h"
#include "processor/cli/command_spec.h"
#include "processor/cli/commands.h"
#include "processor/cli/format_option.h"
#include "processor/cli/output_file.h"
#include "processor/cli/trace_options.h"
#include "processor/render/maps_report.h"
#include "processor/render/pprof_profiles.h"

namespace pageblame::cli {

const CommandSpec& MapsSpec() {
  static const CommandSpec kSpec = [] {
    CommandSpec s;
    s.name = "maps";
    s.help = absl::StrCat(
        "usage: pageblame maps -i TRACE [--pid PID] [--at T] [--split] [--kind K]\n"
        "                      [--format text|json|pprof] [-o FILE] [-v]\n"
        "The reconstructed address space of every traced process (or PID) at time T,\n"
        "each region with its kind (thread stack, malloc, heap, file, image, jit code,\n"
        "gc heap, anon, reservation), the call stack that created it (or 'existed\n"
        "before the trace') and, if it was committed later, the one that committed it.\n"
        "  --split               text: every region version (one per creating call)\n"
        "                        instead of one row per run the kernel would merge\n"
        "  --format text|json|pprof\n"
        "                        pprof: a gzipped profile.proto of the bytes by creating\n"
        "                        stack (go tool pprof, speedscope, Pyroscope); --json is\n"
        "                        --format json\n"
        "  -o, --output FILE     write the answer to FILE instead of standard output\n",
        kKindHelp, kFramesHelp, kTraceOptionsHelp);
    s.value_flags = kTraceValueFlags;
    s.value_flags.insert({"--format", "--output", "--kind"});
    s.value_flags.insert(kFramesFlags.begin(), kFramesFlags.end());
    s.bool_flags = kTraceBoolFlags;
    s.bool_flags.insert("--split");
    s.aliases = kTraceAliases;
    s.aliases["-o"] = "--output";
    return s;
  }();
  return kSpec;
}

int RunMaps(const std::vector<std::string>& argv) {
  int rc = 0;
  std::optional<Args> args = ParseCommand(MapsSpec(), argv, &rc);
  if (!args) return rc;
  const absl::StatusOr<AnswerFormat> format =
      ParseFormat(*args, {AnswerFormat::kText, AnswerFormat::kJson, AnswerFormat::kPprof});
  if (!format.ok()) return CommandUsage(MapsSpec(), std::string(format.status().message()));
  auto sel = ParseSelection(*args);
  if (!sel.ok()) return ReportError(sel.status());
  auto frames = ParseFrames(*args);
  if (!frames.ok()) return CommandUsage(MapsSpec(), std::string(frames.status().message()));
  auto kinds = ParseKindFilter(*args);
  if (!kinds.ok()) return CommandUsage(MapsSpec(), std::string(kinds.status().message()));
  auto out = OutputFile::Open(args->Value("--output"), args->ValuesExcept("--output"));
  if (!out.ok()) return ReportError(out.status());
  auto trace = LoadFromArgs(*args);
  if (!trace.ok()) return ReportError(trace.status());
  auto resolved = Resolve(*sel, **trace, /*by_commit=*/false);
  if (!resolved.ok()) return ReportError(resolved.status());
  analysis::KindClassifier classifier((*trace)->frames());
  analysis::MapsQuery q;
  q.Select(**trace, *resolved);
  q.kinds = *kinds;
  q.kind_of = classifier.Function();
  q.runs = *format == AnswerFormat::kText;
  q.split = args->Has("--split");
  const analysis::MapsAnswer answer = analysis::Maps((*trace)->index(), q);
  absl::Status written;
  if (*format == AnswerFormat::kJson) {
    // Streamed: a big map's JSON is never held whole.
    if (!render::WriteMapsJson(**trace, answer, (*out)->stream())) written = (*out)->WriteError();
  } else if (*format == AnswerFormat::kPprof) {
    written = (*out)->Write(render::MapsPprof(**trace, answer));
  } else {
    written = (*out)->WriteText(render::MapsText(**trace, answer, *frames));
  }
  if (written.ok()) written = (*out)->Close();
  return written.ok() ? 0 : ReportError(written);
}

}  // namespace pageblame::cli

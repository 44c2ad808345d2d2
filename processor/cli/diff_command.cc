#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#include "processor/base/text_escape.h"
#include "processor/cli/args.h"
#include "processor/cli/command_spec.h"
#include "processor/cli/commands.h"
#include "processor/regions/page_diff.h"
#include "processor/regions/region_table_reader.h"
#include "processor/render/diff_report.h"

namespace pageblame::cli {

const CommandSpec& DiffSpec() {
  static const CommandSpec kSpec = [] {
    CommandSpec s;
    s.name = "diff";
    s.help =
        "usage: pageblame diff ADDRESS_TABLE RUNTIME_TABLE [--json]\n"
        "The committed bytes of ADDRESS_TABLE (e.g. WinDbg !address) that no region of\n"
        "RUNTIME_TABLE (e.g. SOS !maddress) knows about, page-exact, and the reverse.\n"
        "Tables: WinDbg !address, SOS maddress, the page-diff tool's result, pmap -X/-XX,\n"
        "/proc/PID/maps or smaps, a list of addresses / START-END ranges, or an ELF core\n"
        "file (dotnet-dump collect, createdump, gcore, the kernel), detected from the\n"
        "content; text may be UTF-8 or UTF-16 with a byte-order mark.\n"
        "A table with an Rss column (pmap -x/-X/-XX, smaps) adds its resident bytes:\n"
        "exact for rows wholly in the result, bounds for rows partly in it\n"
        "(docs/regions.md).\n"
        "  --json                JSON output (docs/cli.md)\n";
    s.bool_flags = {"--json"};
    s.min_positional = 2;
    return s;
  }();
  return kSpec;
}

void PrintSkipped(const regions::RegionTable& t, const std::string& name) {
  for (const std::string& note : {render::SkippedNote(t, name), render::RssNote(t, name)}) {
    if (!note.empty()) std::fprintf(stderr, "pageblame: %s\n", EscapeName(note).c_str());
  }
}

int RunDiff(const std::vector<std::string>& argv) {
  int rc = 0;
  std::optional<Args> args = ParseCommand(DiffSpec(), argv, &rc);
  if (!args) return rc;
  const std::string& a_path = args->positional()[0];
  const std::string& m_path = args->positional()[1];
  // A bad table is bad input, not bad usage: exit 1, naming file and line.
  auto a = regions::RegionTableReader::DetectAndParse(a_path);
  if (!a.ok()) return ReportError(a.status());
  auto m = regions::RegionTableReader::DetectAndParse(m_path);
  if (!m.ok()) return ReportError(m.status());
  PrintSkipped(*a, a_path);
  PrintSkipped(*m, m_path);
  regions::DiffResult d = regions::Diff(*a, *m);
  // Written as made: a table of millions of rows makes an answer of GBs.
  const bool written = args->Has("--json") ? render::WriteDiffJson(d, stdout)
                                           : render::WriteDiffText(d, a_path, m_path, stdout);
  if (!written || std::fflush(stdout) != 0) {
    return ReportError(absl::UnavailableError(absl::StrCat("cannot write the answer: ", std::strerror(errno))));
  }
  return 0;
}

}  // namespace pageblame::cli

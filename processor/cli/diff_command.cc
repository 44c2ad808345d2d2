#include <cstdio>

#include "processor/cli/args.h"
#include "processor/cli/commands.h"
#include "processor/regions/page_diff.h"
#include "processor/regions/region_table_reader.h"
#include "processor/report/diff_report.h"

namespace pageblame::cli {

static constexpr char kDiffHelp[] =
    "usage: pageblame diff ADDRESS_TABLE RUNTIME_TABLE [--json]\n"
    "The committed bytes of ADDRESS_TABLE (e.g. WinDbg !address) that no region of\n"
    "RUNTIME_TABLE (e.g. SOS !maddress) knows about, page-exact, and the reverse.\n"
    "Tables: WinDbg !address, SOS maddress, the seed page-diff result, pmap -X/-XX,\n"
    "/proc/PID/maps or smaps, a list of addresses / START-END ranges, or an ELF core\n"
    "file (dotnet-dump collect, createdump, gcore, the kernel), detected from the\n"
    "content; text may be UTF-8 or UTF-16 with a byte-order mark.\n";

void PrintSkipped(const regions::RegionTable& t, const std::string& name) {
  std::string note = report::SkippedNote(t, name);
  if (!note.empty()) std::fprintf(stderr, "pageblame: %s\n", note.c_str());
}

int ReportTableError(const absl::Status& s) {
  // A bad table is bad input, not bad usage: exit 1, one line naming file and line.
  std::fprintf(stderr, "pageblame: %s\n", std::string(s.message()).c_str());
  return 1;
}

int RunDiff(const std::vector<std::string>& argv) {
  for (const std::string& a : argv) {
    if (a == "-h" || a == "--help") return std::fputs(kDiffHelp, stdout), 0;
  }
  auto args = Args::Parse(argv, {}, {}, {"--json"});
  if (!args.ok()) {
    std::fprintf(stderr, "pageblame diff: %s\n%s", std::string(args.status().message()).c_str(), kDiffHelp);
    return 2;
  }
  if (args->positional().size() != 2) {
    std::fprintf(stderr, "pageblame diff: expected two region tables, got %zu arguments\n%s",
                 args->positional().size(), kDiffHelp);
    return 2;
  }
  const std::string& a_path = args->positional()[0];
  const std::string& m_path = args->positional()[1];
  auto a = regions::RegionTableReader::DetectAndParse(a_path);
  if (!a.ok()) return ReportTableError(a.status());
  auto m = regions::RegionTableReader::DetectAndParse(m_path);
  if (!m.ok()) return ReportTableError(m.status());
  PrintSkipped(*a, a_path);
  PrintSkipped(*m, m_path);
  regions::DiffResult d = regions::Diff(*a, *m);
  if (args->Has("--json")) {
    std::printf("%s\n", report::DumpJson(report::DiffJson(d)).c_str());
  } else {
    std::fputs(report::DiffText(d, a_path, m_path).c_str(), stdout);
  }
  return 0;
}

}  // namespace pageblame::cli

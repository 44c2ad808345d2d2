// `pageblame dotnet-regions`: the .NET runtime's own table of a core dump or
// a live process, in SOS maddress's form, for `diff` and `attribute`. ClrMD
// does the reading, in the helper tools/dotnet-regions (a .NET program the
// build builds when a .NET 10 SDK is installed); this command checks the target, runs the helper, and
// cuts its ranges to the process's own regions (RuntimeTableBuilder).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "processor/base/input_file.h"
#include "processor/base/status_macros.h"
#include "processor/base/text_escape.h"
#include "processor/cli/child_process.h"
#include "processor/cli/command_spec.h"
#include "processor/cli/commands.h"
#include "processor/cli/output_file.h"
#include "processor/cli/usage.h"
#include "processor/regions/clr_helper_output.h"
#include "processor/regions/core_file_parser.h"
#include "processor/regions/elf_core_reader.h"
#include "processor/regions/maddress_table_writer.h"
#include "processor/regions/proc_maps_parser.h"
#include "processor/regions/runtime_table_builder.h"

namespace pageblame::cli {

const CommandSpec& DotnetRegionsSpec() {
  static const CommandSpec kSpec = [] {
    CommandSpec s;
    s.name = "dotnet-regions";
    s.help =
        "usage: pageblame dotnet-regions (CORE | -p PID) [-o FILE]\n"
        "The .NET runtime's own memory ranges in a core dump (dotnet-dump collect,\n"
        "createdump) or a running .NET process: GC regions (committed part and reserved\n"
        "rest), loader, stub and code heaps, the handle table, the GC's bookkeeping, and\n"
        "the images the runtime loaded (native libraries, assemblies; not files the\n"
        "app mapped itself), each cut to the process's own mappings. Written\n"
        "as an SOS maddress table, the runtime table 'pageblame diff' and 'attribute\n"
        "--maddress' take (SOS maddress itself runs only under WinDbg). Thread stacks\n"
        "are not listed. Reads through ClrMD: needs the helper the build builds when\n"
        "a .NET 10 SDK is installed, and the target's .NET runtime on this machine.\n"
        "  -p, --pid PID         a running .NET process (stopped while it is read, under\n"
        "                        a second; needs its user or root)\n"
        "  -o, --output FILE     write the table to FILE (default: standard output)\n";
    s.value_flags = {"--pid", "--output"};
    s.aliases = {{"-p", "--pid"}, {"-o", "--output"}};
    s.many_positional = true;
    return s;
  }();
  return kSpec;
}

namespace {

constexpr char kHelperEnv[] = "PAGEBLAME_DOTNET_REGIONS_HELPER";

// The helper: $PAGEBLAME_DOTNET_REGIONS_HELPER, else
// <pageblame's directory>/../lib/dotnet-regions/dotnet-regions.dll (where
// the build puts it: build/bin/pageblame, build/lib/dotnet-regions/).
// How to get the helper, from what is installed here.
std::string HelperFix() {
  const std::string sdks = ChildProcess::FindInPath("dotnet").empty() ? "" : [] {
    absl::StatusOr<ChildProcess::Result> r = ChildProcess::Run({"dotnet", "--list-sdks"});
    return r.ok() ? r->out : std::string();
  }();
  const bool sdk10 = absl::StartsWith(sdks, "10.") || absl::StrContains(sdks, "\n10.");
  return absl::StrCat(
      sdk10 ? "a .NET 10 SDK is installed: build pageblame again ('cmake -S . -B build && cmake --build build' in "
              "its source tree; build/dotnet-regions-build.log says why it did not build)"
            : "it needs a .NET 10 SDK ('dotnet --list-sdks' lists none): install one (Debian/Ubuntu: "
              "'apt-get install dotnet-sdk-10.0' from Microsoft's package feed; or dotnet-install.sh from "
              "https://dot.net), then 'cmake -S . -B build && cmake --build build' in pageblame's source tree "
              "builds the helper",
      "; or take the runtime's table from SOS: 'dotnet-dump analyze DUMP -c eeheap > eeheap.txt' (diff and "
      "attribute read it)");
}

absl::StatusOr<std::string> FindHelper() {
  if (const char* env = std::getenv(kHelperEnv); env && *env) {
    if (access(env, R_OK) == 0) return std::string(env);
    return absl::NotFoundError(absl::StrCat("$", kHelperEnv, " names ", env, ", which cannot be read"));
  }
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  std::string dir = n > 0 ? std::string(exe, n) : "";
  dir = dir.substr(0, dir.rfind('/'));
  const std::string helper = absl::StrCat(dir, "/../lib/dotnet-regions/dotnet-regions.dll");
  if (access(helper.c_str(), R_OK) == 0) return helper;
  return absl::NotFoundError(absl::StrCat(
      "the ClrMD helper is not built (no ", helper, "): ", HelperFix()));
}

// The core's own region table; refuses what ClrMD cannot read: not an ELF
// core, or a core without its memory (trimmed or cut short).
absl::StatusOr<regions::RegionTable> CoreTable(const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<InputFile> file, InputFile::Open(path, "core dump", InputFile::Accept::kRegular));
  ASSIGN_OR_RETURN(std::string head, file->ReadAt(0, 4));
  if (!regions::CoreFileParser::IsElf(head))
    return absl::InvalidArgumentError(absl::StrCat(path, ": not an ELF core dump (dotnet-dump collect, createdump)"));
  ASSIGN_OR_RETURN(std::unique_ptr<regions::ElfCoreReader> core,
                   regions::ElfCoreReader::OpenFile(file->fd(), file->size(), path));
  int with_data = 0;
  for (const regions::LoadSegment& s : core->loads()) with_data += s.data_in_file && s.filesz > 0;
  if (!core->loads().empty() && with_data == 0)
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": the core holds none of its memory (the data of its ", core->loads().size(),
        " segments lies past the end of the file: a trimmed or cut-short copy); the runtime's "
        "ranges are read from the dump's memory"));
  return regions::CoreFileParser::Build(*core, path);
}

// A live target: it exists and we may read its maps.
absl::Status CheckProcess(const std::string& pid) {
  const std::string maps = absl::StrCat("/proc/", pid, "/maps");
  if (access(absl::StrCat("/proc/", pid).c_str(), F_OK) != 0)
    return absl::NotFoundError(absl::StrCat("no process ", pid));
  if (access(maps.c_str(), R_OK) != 0)
    return absl::PermissionDeniedError(
        absl::StrCat("cannot read ", maps, ": run as the process's user or as root"));
  return absl::OkStatus();
}

// Runs the helper; its output parsed, or its own message.
absl::StatusOr<regions::ClrHelperOutput> RunHelper(const std::string& helper, const std::vector<std::string>& target,
                                                   const std::string& name) {
  const std::string dotnet = ChildProcess::FindInPath("dotnet");
  if (dotnet.empty())
    return absl::NotFoundError(
        "dotnet is not in PATH: the ClrMD helper runs on the .NET runtime (install it, or put it in PATH)");
  std::vector<std::string> argv = {dotnet, helper};
  argv.insert(argv.end(), target.begin(), target.end());
  ASSIGN_OR_RETURN(ChildProcess::Result r, ChildProcess::Run(argv));
  if (r.exit_code != 0) {
    absl::string_view why = absl::StripTrailingAsciiWhitespace(r.err);
    absl::ConsumePrefix(&why, "dotnet-regions: ");
    return absl::InvalidArgumentError(why.empty() ? absl::StrCat(name, ": the ClrMD helper failed (exit ",
                                                                 r.exit_code, ") and said nothing")
                                                  : std::string(why));
  }
  if (!r.err.empty()) std::fputs(EscapeText(r.err).c_str(), stderr);
  return regions::ClrHelperOutputParser::Parse(regions::TextLines(absl::StrCat(helper, " output"), std::move(r.out)));
}

std::vector<std::string> Comments(const regions::ClrHelperOutput& clr, const std::string& name) {
  return {absl::StrCat("pageblame dotnet-regions: the .NET runtime's own ranges in ", name),
          absl::StrCat("runtime ", clr.runtime, clr.build_id.empty() ? "" : " (build id " + clr.build_id + ")",
                       ", read with ClrMD ", clr.clrmd_version),
          "each range cut to the process's regions; Image rows to the image's own mappings; no thread stacks",
          "use: pageblame diff MAPS_OR_CORE THIS_FILE; pageblame attribute -i TRACE --address MAPS_OR_CORE "
          "--maddress THIS_FILE"};
}

void Summarize(const regions::RuntimeTable& t, const regions::ClrHelperOutput& clr) {
  uint64_t gc = 0, images = 0, other = 0, reserved = 0;
  for (const regions::RuntimeRow& r : t.rows) {
    const uint64_t bytes = r.end - r.start;
    if (r.state != "MEM_COMMIT") reserved += bytes;
    else if (r.kind == "GCHeap") gc += bytes;
    else if (r.kind == "Image") images += bytes;
    else other += bytes;
  }
  auto mib = [](uint64_t b) { return absl::StrFormat("%.1f MiB", static_cast<double>(b) / (1 << 20)); };
  std::fprintf(stderr,
               "pageblame dotnet-regions: %zu rows: committed %s GC heap, %s other runtime heaps, %s images; "
               "%s reserved\n",
               t.rows.size(), mib(gc).c_str(), mib(other).c_str(), mib(images).c_str(), mib(reserved).c_str());
  if (t.image_bytes_clipped > 0)
    std::fprintf(stderr, "pageblame dotnet-regions: Image rows cut to their files' mappings: %s of ClrMD's image "
                 "sizes left out%s\n", mib(t.image_bytes_clipped).c_str(),
                 t.images_without_mapping ? absl::StrCat(" (", t.images_without_mapping, " images not mapped)").c_str() : "");
  if (t.unmapped_bytes > 0)
    std::fprintf(stderr, "pageblame dotnet-regions: %s of runtime ranges not mapped, left out\n",
                 mib(t.unmapped_bytes).c_str());
  for (const std::string& w : clr.warnings) std::fprintf(stderr, "pageblame dotnet-regions: warning: %s\n", w.c_str());
}

int Run(const Args& args) {
  const std::optional<std::string> pid = args.Value("--pid");
  if (pid.has_value() == (args.positional().size() == 1) || args.positional().size() > 1)
    return CommandUsage(DotnetRegionsSpec(), "give either a CORE file or -p PID");
  uint32_t pid_value = 0;
  if (pid && (!absl::SimpleAtoi(*pid, &pid_value) || pid_value == 0))
    return CommandUsage(DotnetRegionsSpec(), absl::StrCat("bad --pid '", *pid, "': expected a process id"));
  auto out = OutputFile::Open(args.Value("--output"), args.ValuesExcept("--output"));
  if (!out.ok()) return ReportError(out.status());
  const std::string name = pid ? absl::StrCat("pid ", pid_value) : args.positional()[0];
  regions::RegionTable os;
  if (pid) {
    if (absl::Status s = CheckProcess(absl::StrCat(pid_value)); !s.ok()) return ReportError(s);
  } else {
    auto core = CoreTable(args.positional()[0]);
    if (!core.ok()) return ReportError(core.status());
    os = *std::move(core);
  }
  auto helper = FindHelper();
  if (!helper.ok()) return ReportError(helper.status());
  auto clr = RunHelper(*helper, pid ? std::vector<std::string>{"--pid", absl::StrCat(pid_value)}
                                    : std::vector<std::string>{"--core", args.positional()[0]},
                       name);
  if (!clr.ok()) return ReportError(clr.status());
  if (pid) {
    auto maps = regions::ProcMapsParser::Parse(regions::TextLines(absl::StrCat("/proc/", pid_value, "/maps"), clr->maps));
    if (!maps.ok()) return ReportError(maps.status());
    os = *std::move(maps);
  }
  const regions::RuntimeTable table = regions::RuntimeTableBuilder::Build(*clr, os);
  absl::Status written = (*out)->Write(regions::MaddressTableWriter::Write(table.rows, Comments(*clr, name)));
  if (written.ok()) written = (*out)->Close();
  if (!written.ok()) return ReportError(written);
  Summarize(table, *clr);
  return kExitOk;
}

}  // namespace

int RunDotnetRegions(const std::vector<std::string>& argv) {
  int rc = 0;
  std::optional<Args> args = ParseCommand(DotnetRegionsSpec(), argv, &rc);
  if (!args) return rc;
  return Run(*args);
}

}  // namespace pageblame::cli

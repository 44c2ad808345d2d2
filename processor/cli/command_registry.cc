// The table of subcommands: main() dispatches through it, --help lists it,
// and a test checks every command's options against its help text.
#include "processor/cli/command_registry.h"

#include "processor/cli/commands.h"

namespace pageblame::cli {

const std::vector<Command>& AllCommands() {
  static const std::vector<Command> kCommands = {
      {&RecordSpec(), RunRecord, "record the memory syscalls of a command or a running process"},
      {&MapsSpec(), RunMaps, "the address space at a moment, with who created and committed it"},
      {&QuerySpec(), RunQuery, "who created (and committed) the page at ADDR, and its history"},
      {&DotnetRegionsSpec(), RunDotnetRegions, "the .NET runtime's own table of a core dump or a live process"},
      {&HeapSpec(), RunHeap, "inside glibc malloc: in use, free held by glibc, what malloc_trim(0) returns"},
      {&DiffSpec(), RunDiff, "bytes one region table has and the other not (page-exact)"},
      {&AttributeSpec(), RunAttribute, "which stacks made the regions of a table or of a diff"},
      {&GrowthSpec(), RunGrowth, "what each stack mapped and unmapped between two moments"},
      {&ReportSpec(), RunReport, "an offline HTML page: bytes over time, flame graph, address space"},
      {&IndexSpec(), RunIndex, "replay a trace now and keep TRACE.index beside it for the next commands"},
  };
  return kCommands;
}

const Command* FindCommand(const std::string& name) {
  for (const Command& c : AllCommands()) {
    if (c.spec->name == name) return &c;
  }
  return nullptr;
}

}  // namespace pageblame::cli

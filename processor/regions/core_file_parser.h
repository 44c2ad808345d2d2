// CoreFileParser: an ELF core file (kernel, gdb's gcore, createdump /
// dotnet-dump collect) read as the operating system's region table, the way
// WinDbg's !address shows a Linux dump.
//
//   ASSIGN_OR_RETURN(RegionTable t, CoreFileParser::ParseFile(fd, size, "app.core"));
//   // t.format == "elf-core", t.has_state == true
//
// Regions:
//   - Each PT_LOAD segment [p_vaddr, p_vaddr + p_memsz), cut where NT_FILE
//     entries start or end inside it. p_flags give protect: PAGE_READONLY,
//     PAGE_READWRITE, PAGE_EXECUTE_READ, PAGE_EXECUTE_READWRITE, ...;
//     no flag at all is PAGE_NOACCESS. State MEM_COMMIT if any of r/w/x is
//     set, MEM_RESERVE for PROT_NONE (the kernel writes reserved address
//     space that way; .NET reserves with PROT_NONE). Type MEM_MAPPED where an
//     NT_FILE entry covers it (usage = the file's path), else MEM_PRIVATE.
//   - Each NT_FILE range (or part) that no PT_LOAD covers: a file mapping the
//     core writer left out because its contents are on disk (gcore leaves
//     read-only file mappings out, the text of every library). MEM_MAPPED,
//     MEM_COMMIT, protect empty (the note does not record it), usage = path.
//   - Left out (counted as skipped): empty PT_LOADs, and createdump's fake
//     "special diagnostics info" page (one PF_R page at 0x7ffffff10000,
//     0x7fff1000 on 32-bit, starting "DIAGINFOHEADER"; createdump's
//     specialdiaginfo.h): it is not process memory.
// Region::line is the PT_LOAD's program header number (1-based, file order);
// for an NT_FILE-only range, the number of program headers plus its 1-based
// NT_FILE entry number. Regions are sorted by start.
//
// What is committed (RegionTable::IsCommitted): as for WinDbg, MEM_COMMIT
// only. gcore marks every segment readable (PF_R), PROT_NONE mappings too,
// so in a gcore core a reserve looks committed; kernel cores keep p_flags 0
// and createdump leaves PROT_NONE memory out. Segment data need not be in the file (see
// ElfCoreReader): only the headers and notes are read.
#ifndef PAGEBLAME_REGIONS_CORE_FILE_PARSER_H_
#define PAGEBLAME_REGIONS_CORE_FILE_PARSER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "processor/regions/elf_core_reader.h"
#include "processor/regions/region.h"

namespace pageblame::regions {

class CoreFileParser {
 public:
  static constexpr absl::string_view kFormat = "elf-core";

  // The first bytes of a file start with the ELF magic (any ELF file: the
  // parser says what to do with one that is not a core).
  static bool IsElf(absl::string_view head);

  // `fd`: a regular file of `size` bytes. Errors start with `name`.
  static absl::StatusOr<RegionTable> ParseFile(int fd, uint64_t size, const std::string& name);
  // The same over the file's bytes in memory.
  static absl::StatusOr<RegionTable> ParseBytes(std::string bytes, const std::string& name);
  // The table for an opened core.
  static absl::StatusOr<RegionTable> Build(const ElfCoreReader& core, const std::string& name);

  // "PAGE_EXECUTE_READ" for PF_R | PF_X, ...
  static std::string Protect(uint32_t pf_flags);
};

}  // namespace pageblame::regions

#endif  // PAGEBLAME_REGIONS_CORE_FILE_PARSER_H_

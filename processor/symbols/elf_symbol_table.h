// The function symbols of one ELF file and the map from file offsets to
// virtual addresses, enough to name an ip inside a mapping of that file.
//
//   ASSIGN_OR_RETURN(auto table, ElfSymbolTable::Load("/usr/lib/x86_64-linux-gnu/libc.so.6"));
//   // ip inside a mapping {start, pgoff} of the file:
//   std::optional<uint64_t> vaddr = table->FileOffsetToVaddr(ip - start + pgoff);
//   const ElfSymbolTable::Symbol* sym = vaddr ? table->Find(*vaddr) : nullptr;
//   // sym->name is the raw (mangled) name; sym->start <= *vaddr < sym->end
//
// Symbols come from .symtab and .dynsym (both, merged; aliases at one address
// collapse to the one perf would print, see choose_best_symbol() in perf's
// tools/perf/util/symbol.c). Kept: STT_FUNC and STT_GNU_IFUNC, plus named
// STT_NOTYPE labels in executable sections (assembly entry points; perf's
// elf_sym__is_label()). A symbol of size 0 extends to the next symbol, but not
// past the end of its section (perf's symbols__fixup_end()).
//
// Load() is O(n log n) in the symbol count; Find() is O(log n) plus a short
// backward scan over symbols that may enclose the address.
#ifndef PAGEBLAME_SYMBOLS_ELF_SYMBOL_TABLE_H_
#define PAGEBLAME_SYMBOLS_ELF_SYMBOL_TABLE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace pageblame::symbols {

class ElfSymbolTable {
 public:
  struct Symbol {
    uint64_t start = 0;  // st_value (a virtual address)
    uint64_t end = 0;    // exclusive
    std::string_view name;  // as in the string table (mangled); owned by the table
  };

  // Reads program headers, the build id note and the symbols of `path`.
  static absl::StatusOr<std::unique_ptr<ElfSymbolTable>> Load(const std::string& path);

  // Adds the symbols of `debug` (a separate debug file of the same build) to
  // this table. The address layout stays this file's: a debug file's program
  // headers carry no real file offsets.
  void MergeSymbolsFrom(const ElfSymbolTable& debug);

  // The virtual address of file offset `offset`, through the PT_LOAD segment
  // that maps it: offset - p_offset + p_vaddr. nullopt if no segment does.
  std::optional<uint64_t> FileOffsetToVaddr(uint64_t offset) const;

  // The symbol with the greatest start <= vaddr whose [start, end) holds it;
  // nullptr if none. The pointer is valid until the next MergeSymbolsFrom().
  const Symbol* Find(uint64_t vaddr) const;

  const std::string& build_id() const { return build_id_; }  // raw bytes
  const std::string& path() const { return path_; }
  bool has_symtab() const { return has_symtab_; }
  bool is_32bit() const { return is_32bit_; }  // ELFCLASS32
  // True for a separate debug file (code sections are SHT_NOBITS): its file
  // offsets are guessed from the virtual addresses, see Load().
  bool is_debug_only() const { return debug_only_; }
  size_t size() const { return symbols_.size(); }

  // A PT_LOAD program header.
  struct Segment {
    uint64_t offset = 0;
    uint64_t vaddr = 0;
    uint64_t filesz = 0;
    uint64_t memsz = 0;
    uint32_t flags = 0;  // PF_R | PF_W | PF_X
  };
  const std::vector<Segment>& segments() const { return segments_; }

  // A symbol as read, before aliases are collapsed (public for the .cc's
  // helpers only).
  struct RawSymbol {
    uint64_t start = 0;
    uint64_t size = 0;
    uint64_t section_end = 0;  // sh_addr + sh_size of the symbol's section
    unsigned char binding = 0;  // STB_*
    bool from_symtab = false;
    uint32_t order = 0;  // position in the file's tables (merged: after the binary's)
    std::string name;
  };

 private:

  ElfSymbolTable() = default;
  // Sorts raw_, collapses aliases into symbols_ and computes the ends.
  void Finalize();

  std::string path_;
  std::string build_id_;
  bool has_symtab_ = false;
  bool is_32bit_ = false;
  bool debug_only_ = false;
  std::vector<Segment> segments_;
  std::vector<RawSymbol> raw_;   // every kept symbol of this file (and merged ones)
  std::vector<Symbol> symbols_;  // sorted by start, one per address
  uint64_t max_extent_ = 0;      // largest end - start, bounds Find()'s scan
};

}  // namespace pageblame::symbols

#endif  // PAGEBLAME_SYMBOLS_ELF_SYMBOL_TABLE_H_

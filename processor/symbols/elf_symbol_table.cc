#include "processor/symbols/elf_symbol_table.h"

#include <elf.h>
#include <gelf.h>

#include <algorithm>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "processor/base/status_macros.h"
#include "processor/symbols/elf_handle.h"

namespace pageblame::symbols {
namespace {

constexpr uint64_t kPageSize = 4096;

struct SectionInfo {
  uint64_t addr = 0;
  uint64_t size = 0;
  uint64_t flags = 0;
  uint32_t type = SHT_NULL;
};

size_t LeadingUnderscores(std::string_view name) {
  size_t n = 0;
  while (n < name.size() && name[n] == '_') ++n;
  return n;
}

// True if `a` is the better name for an address that `b` also names. Mirrors
// the order of perf's choose_best_symbol() (tools/perf/util/symbol.c): a sized
// symbol, then a non-weak one, then a global one, then fewer leading
// underscores, then the longer name; then .symtab over .dynsym and finally the
// earlier entry of the table, which is what perf keeps on a full tie
// (symbols__fixup_duplicate() keeps the first; e.g. glibc's
// "clock_nanosleep@GLIBC_2.2.5" over "clock_nanosleep@@GLIBC_2.17").
bool BetterAlias(const ElfSymbolTable::RawSymbol& a, const ElfSymbolTable::RawSymbol& b) {
  if ((a.size > 0) != (b.size > 0)) return a.size > 0;
  bool a_weak = a.binding == STB_WEAK, b_weak = b.binding == STB_WEAK;
  if (a_weak != b_weak) return !a_weak;
  bool a_global = a.binding == STB_GLOBAL, b_global = b.binding == STB_GLOBAL;
  if (a_global != b_global) return a_global;
  size_t a_us = LeadingUnderscores(a.name), b_us = LeadingUnderscores(b.name);
  if (a_us != b_us) return a_us < b_us;
  if (a.name.size() != b.name.size()) return a.name.size() > b.name.size();
  if (a.from_symtab != b.from_symtab) return a.from_symtab;
  return a.order < b.order;
}

// ARM/AArch64 mapping symbols ($a, $d, $t, $x...) mark code/data, not functions.
bool IsMappingSymbol(std::string_view name) {
  return name.size() >= 2 && name[0] == '$' && (name.size() == 2 || name[2] == '.');
}

// Which symbols name code, as perf's elf_sym__is_function()/is_label() decide.
bool KeepSymbol(const GElf_Sym& sym, std::string_view name, const SectionInfo* section) {
  if (name.empty() || section == nullptr) return false;
  switch (GELF_ST_TYPE(sym.st_info)) {
    case STT_FUNC:
    case STT_GNU_IFUNC:
      return true;
    case STT_NOTYPE:
      return (section->flags & SHF_EXECINSTR) != 0 && !IsMappingSymbol(name);
    default:
      return false;
  }
}

void ReadSymbols(Elf* elf, Elf_Scn* scn, const GElf_Shdr& shdr,
                 const std::vector<SectionInfo>& sections, bool from_symtab,
                 std::vector<ElfSymbolTable::RawSymbol>* out) {
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (data == nullptr || shdr.sh_entsize == 0) return;
  size_t count = shdr.sh_size / shdr.sh_entsize;
  for (size_t i = 1; i < count; ++i) {  // entry 0 is the reserved null symbol
    GElf_Sym sym;
    if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) break;
    // Undefined, absolute, common and extended-index symbols name no code here.
    if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE) continue;
    const SectionInfo* section =
        sym.st_shndx < sections.size() ? &sections[sym.st_shndx] : nullptr;
    const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
    if (name == nullptr || !KeepSymbol(sym, name, section)) continue;
    ElfSymbolTable::RawSymbol raw;
    raw.start = sym.st_value;
    raw.size = sym.st_size;
    raw.section_end = section->addr + section->size;
    raw.binding = GELF_ST_BIND(sym.st_info);
    raw.from_symtab = from_symtab;
    raw.order = static_cast<uint32_t>(out->size());
    raw.name = name;
    out->push_back(std::move(raw));
  }
}

// BetterAlias as one number per symbol, smaller = better: the sort compares
// two integers instead of calling it (and scanning names) ~n log n times, on
// tables of tens of thousands of symbols (glibc with its debug file).
// Leading underscores past 2^16 - 1 tie here and are told apart by
// BetterAlias itself.
uint64_t AliasRank(const ElfSymbolTable::RawSymbol& s) {
  const uint64_t underscores = std::min<size_t>(LeadingUnderscores(s.name), 0xffff);
  const uint64_t shorter = 0xffffffffu - std::min<size_t>(s.name.size(), 0xffffffffu);
  return (uint64_t{s.size == 0} << 51) | (uint64_t{s.binding == STB_WEAK} << 50) |
         (uint64_t{s.binding != STB_GLOBAL} << 49) | (underscores << 33) | (shorter << 1) |
         uint64_t{!s.from_symtab};
}

}  // namespace

absl::StatusOr<std::unique_ptr<ElfSymbolTable>> ElfSymbolTable::Load(const std::string& path) {
  ASSIGN_OR_RETURN(ElfHandle handle, ElfHandle::Open(path));
  Elf* elf = handle.elf();
  std::unique_ptr<ElfSymbolTable> table(new ElfSymbolTable());
  table->path_ = path;
  table->build_id_ = handle.BuildId();
  table->is_32bit_ = gelf_getclass(elf) == ELFCLASS32;

  size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": bad program headers"));
  }
  bool code_has_bytes = false, has_code_segment = false;
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr || phdr.p_type != PT_LOAD) {
      continue;
    }
    table->segments_.push_back(
        {phdr.p_offset, phdr.p_vaddr, phdr.p_filesz, phdr.p_memsz, phdr.p_flags});
    if ((phdr.p_flags & PF_X) && phdr.p_memsz > 0) {
      has_code_segment = true;
      code_has_bytes |= phdr.p_filesz > 0;
    }
  }
  // A separate debug file (objcopy --only-keep-debug) keeps the program
  // headers but zeroes the offsets of segments it no longer carries bytes
  // for. Only when such a file is all we have do we guess the layout the
  // usual linkers produce: file offset == vaddr - first segment's page.
  if (has_code_segment && !code_has_bytes) {
    table->debug_only_ = true;
    uint64_t base = UINT64_MAX;
    for (const Segment& s : table->segments_) base = std::min(base, s.vaddr & ~(kPageSize - 1));
    for (Segment& s : table->segments_) {
      s.offset = s.vaddr - base;
      s.filesz = s.memsz;
    }
  }

  size_t shnum = 0;
  if (elf_getshdrnum(elf, &shnum) != 0) shnum = 0;
  std::vector<SectionInfo> sections(shnum);
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    size_t index = elf_ndxscn(scn);
    if (gelf_getshdr(scn, &shdr) == nullptr || index >= sections.size()) continue;
    sections[index] = {shdr.sh_addr, shdr.sh_size, shdr.sh_flags, shdr.sh_type};
  }
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) continue;
    if (shdr.sh_type == SHT_SYMTAB) {
      table->has_symtab_ = true;
      ReadSymbols(elf, scn, shdr, sections, /*from_symtab=*/true, &table->raw_);
    } else if (shdr.sh_type == SHT_DYNSYM) {
      ReadSymbols(elf, scn, shdr, sections, /*from_symtab=*/false, &table->raw_);
    }
  }
  table->Finalize();
  return table;
}

void ElfSymbolTable::MergeSymbolsFrom(const ElfSymbolTable& debug) {
  uint32_t base = 0;  // debug entries come after all of ours
  for (const RawSymbol& sym : raw_) base = std::max(base, sym.order + 1);
  for (const RawSymbol& sym : debug.raw_) {
    raw_.push_back(sym);
    raw_.back().order += base;
  }
  has_symtab_ |= debug.has_symtab_;
  Finalize();
}

void ElfSymbolTable::Finalize() {
  // Sorted by (start, alias rank) through an index, so that each symbol (with
  // its name string) moves once, not at every swap.
  struct Key {
    uint64_t start;
    uint64_t rank;
    uint32_t order;
    uint32_t index;
  };
  std::vector<Key> keys(raw_.size());
  for (size_t i = 0; i < raw_.size(); ++i) {
    keys[i] = Key{raw_[i].start, AliasRank(raw_[i]), raw_[i].order, static_cast<uint32_t>(i)};
  }
  std::sort(keys.begin(), keys.end(), [this](const Key& a, const Key& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.rank != b.rank) return a.rank < b.rank;
    if (a.order != b.order) return BetterAlias(raw_[a.index], raw_[b.index]);
    return false;
  });
  std::vector<RawSymbol> sorted;
  sorted.reserve(raw_.size());
  for (const Key& k : keys) sorted.push_back(std::move(raw_[k.index]));
  raw_ = std::move(sorted);
  // Exact duplicates (the same symbol in .symtab and .dynsym, or merged twice).
  raw_.erase(std::unique(raw_.begin(), raw_.end(),
                         [](const RawSymbol& a, const RawSymbol& b) {
                           return a.start == b.start && a.size == b.size && a.name == b.name;
                         }),
             raw_.end());
  symbols_.clear();
  max_extent_ = 0;
  for (size_t i = 0; i < raw_.size();) {
    const RawSymbol& best = raw_[i];  // sorted first among its aliases
    size_t next = i + 1;
    while (next < raw_.size() && raw_[next].start == best.start) ++next;
    uint64_t end;
    if (best.size > 0) {
      end = best.start + best.size;
    } else {
      // Size 0 (hand-written assembly, some labels): up to the next symbol,
      // within the section.
      bool has_section_end = best.section_end > best.start;
      if (next < raw_.size()) {
        end = raw_[next].start;
        if (has_section_end) end = std::min(end, best.section_end);
      } else {
        end = has_section_end ? best.section_end : best.start + 1;
      }
    }
    symbols_.push_back({best.start, end, best.name});
    max_extent_ = std::max(max_extent_, end - best.start);
    i = next;
  }
}

std::optional<uint64_t> ElfSymbolTable::FileOffsetToVaddr(uint64_t offset) const {
  for (const Segment& s : segments_) {
    if (offset >= s.offset && offset - s.offset < s.filesz) return offset - s.offset + s.vaddr;
  }
  // The mapping starts at the page holding p_offset, and the kernel maps the
  // whole page: bytes just before p_offset (or past p_filesz, up to p_memsz)
  // are still reached through this segment's mapping.
  for (const Segment& s : segments_) {
    uint64_t page_start = s.offset & ~(kPageSize - 1);
    uint64_t extent = std::max(s.filesz, s.memsz);
    if (offset >= page_start && offset < s.offset + extent) return offset - s.offset + s.vaddr;
  }
  return std::nullopt;
}

const ElfSymbolTable::Symbol* ElfSymbolTable::Find(uint64_t vaddr) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), vaddr,
                             [](uint64_t v, const Symbol& s) { return v < s.start; });
  // Walk back from the last symbol starting at or below vaddr; a symbol that
  // starts more than max_extent_ below cannot reach it.
  while (it != symbols_.begin()) {
    --it;
    if (vaddr - it->start >= max_extent_) break;
    if (vaddr < it->end) return &*it;
  }
  return nullptr;
}

}  // namespace pageblame::symbols

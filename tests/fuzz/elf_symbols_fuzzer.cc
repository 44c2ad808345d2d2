// libFuzzer target: an ELF file as the symbolizer reads it (program headers,
// build-id note, .symtab/.dynsym through libelf), then lookups; a symbol
// found must hold the address asked for.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "processor/symbols/elf_handle.h"
#include "processor/symbols/elf_symbol_table.h"
#include "tests/fuzz/mem_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using pageblame::symbols::ElfSymbolTable;
  pageblame::fuzz::MemFile f(data, size);
  if (auto elf = pageblame::symbols::ElfHandle::Open(f.path()); elf.ok()) (void)elf->BuildId();
  auto table = ElfSymbolTable::Load(f.path());
  if (!table.ok()) return 0;
  for (size_t i = 0; i + 8 <= size && i < 512; i += 8) {
    uint64_t addr = 0;
    for (int b = 0; b < 8; ++b) addr |= uint64_t{data[i + b]} << (8 * b);
    if (const ElfSymbolTable::Symbol* s = (*table)->Find(addr)) {
      if (addr < s->start || addr >= s->end) std::abort();
    }
    (void)(*table)->FileOffsetToVaddr(addr);
  }
  return 0;
}

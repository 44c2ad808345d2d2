// The code the unwinder can meet in each process over time: the mappings
// of the trace's one mapping history (symbols/mapping_history.h),
// each mapped file opened once as an ElfModule, found as symbols are (the
// recorded path, --symfs, the build-id cache, /usr/lib/debug).
//
//   ModuleMap modules(locator_options, &history);
//   ModuleMap::Code c = modules.Find(pid, time, pc);
//   if (c.kind == ModuleMap::kElf && c.module) ... c.module->FrameAt(c.vaddr) ...
//
// The history is filled on the loader's thread in file order, which is not time order: a
// library's MMAP2 record can come later in the file than a sample that
// runs its code. Find() then takes a later mapping of the same exec epoch
// if one was read (MappingHistory's rule), and otherwise answers kNone.
#ifndef PAGEBLAME_UNWIND_MODULE_MAP_H_
#define PAGEBLAME_UNWIND_MODULE_MAP_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "processor/symbols/dso_locator.h"
#include "processor/symbols/dso_lookup.h"
#include "processor/symbols/mapping_history.h"
#include "processor/unwind/elf_module.h"

namespace pageblame::unwind {

class ModuleMap {
 public:
  enum Kind {
    kNone,  // no executable mapping holds the pc
    kElf,   // a file mapping: an ELF file (module null if it was not found)
    kJit,   // anonymous or memfd code, or a kernel name ([vdso]): no file to read
  };
  struct Code {
    Kind kind = kNone;
    const ElfModule* module = nullptr;
    uint64_t vaddr = 0;  // kElf with a module: the pc as an address of the ELF file
    bool vaddr_ok = false;
  };
  struct Stats {
    uint64_t files_opened = 0;   // ELF files with unwind tables read
    uint64_t files_missing = 0;  // mapped files not found (or not ELF)
    uint64_t cfi_refused = 0;    // files with CFI refused (ElfModule::cfi_refused)
    std::string first_cfi_refused;
  };

  // Called with each file's path and build id the first time it is opened
  // (the loader starts reading its DWARF for inlined frames then).
  using OnOpened = std::function<void(std::string_view path, std::string_view build_id)>;

  // `maps` outlives this (null: no mappings); Find reads it on the caller's
  // thread, which must be the one filling it (or it must be complete).
  ModuleMap(symbols::DsoLocator::Options locator, const symbols::MappingHistory* maps,
            OnOpened on_opened = nullptr);

  Code Find(uint32_t pid, uint64_t time, uint64_t pc);
  const Stats& stats() const { return stats_; }
  // Every file lookup made, in order: what the unwound stacks depend on.
  const std::vector<symbols::DsoLookup>& lookups() const { return lookups_; }

 private:
  struct MappingInfo {
    Kind kind = kNone;
    const ElfModule* module = nullptr;
  };
  const MappingInfo& InfoFor(const symbols::MappingHistory::Mapping& m);
  const ElfModule* ModuleFor(std::string_view path, std::string_view build_id);

  symbols::DsoLocator locator_;
  std::vector<symbols::DsoLookup> lookups_;
  OnOpened on_opened_;
  const symbols::MappingHistory* maps_;
  // Mapping addresses are stable for the MappingHistory's life.
  absl::flat_hash_map<const symbols::MappingHistory::Mapping*, MappingInfo> info_;
  absl::flat_hash_map<std::pair<std::string, std::string>, std::unique_ptr<ElfModule>> modules_;
  Stats stats_;
};

}  // namespace pageblame::unwind

#endif  // PAGEBLAME_UNWIND_MODULE_MAP_H_

// The code the unwinder can meet in each process over time: executable
// mappings from the trace's MMAP/MMAP2 records, with fork and exec (the
// symbols stage's ProcessMaps), each mapped file opened once as an
// ElfModule, found as symbols are (the recorded path, --symfs, the build-id
// cache, /usr/lib/debug).
//
//   ModuleMap modules(locator_options);
//   modules.AddMapping(pid, time, start, len, pgoff, "/usr/lib/x86_64-linux-gnu/libc.so.6", "");
//   ModuleMap::Code c = modules.Find(pid, time, pc);
//   if (c.kind == ModuleMap::kElf && c.module) ... c.module->FrameAt(c.vaddr) ...
//
// Fed on the loader's thread in file order, which is not time order: a
// library's MMAP2 record can come later in the file than a sample that
// runs its code. Find() then takes a later mapping of the same exec epoch
// if one was read (ProcessMaps's rule), and otherwise answers kNone.
#ifndef PAGEBLAME_UNWIND_MODULE_MAP_H_
#define PAGEBLAME_UNWIND_MODULE_MAP_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "processor/symbols/dso_locator.h"
#include "processor/symbols/process_maps.h"
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

  explicit ModuleMap(symbols::DsoLocator::Options locator, OnOpened on_opened = nullptr);

  // A build id from the HEADER_BUILD_ID feature, for mappings whose record has none.
  void AddBuildId(std::string_view path, std::string_view build_id);
  // An executable mapping (callers skip data mappings: they hold no pc).
  void AddMapping(uint32_t pid, uint64_t time, uint64_t start, uint64_t len, uint64_t pgoff,
                  std::string_view path, std::string_view build_id);
  void OnFork(uint32_t child, uint32_t parent, uint64_t time) { maps_.OnFork(child, parent, time); }
  void OnExec(uint32_t pid, uint64_t time) { maps_.OnExec(pid, time); }

  Code Find(uint32_t pid, uint64_t time, uint64_t pc);
  const Stats& stats() const { return stats_; }

 private:
  struct MappingInfo {
    Kind kind = kNone;
    const ElfModule* module = nullptr;
  };
  const MappingInfo& InfoFor(const symbols::ProcessMaps::Mapping& m);
  const ElfModule* ModuleFor(std::string_view path, std::string_view build_id);

  symbols::DsoLocator locator_;
  OnOpened on_opened_;
  symbols::ProcessMaps maps_;
  absl::flat_hash_map<std::string, std::string> header_build_ids_;
  // Mapping addresses are stable for the ProcessMaps' life.
  absl::flat_hash_map<const symbols::ProcessMaps::Mapping*, MappingInfo> info_;
  absl::flat_hash_map<std::pair<std::string, std::string>, std::unique_ptr<ElfModule>> modules_;
  Stats stats_;
};

}  // namespace pageblame::unwind

#endif  // PAGEBLAME_UNWIND_MODULE_MAP_H_

#include "processor/unwind/module_map.h"

#include "processor/symbols/symbolizer.h"

namespace pageblame::unwind {

ModuleMap::ModuleMap(symbols::DsoLocator::Options locator, const symbols::MappingHistory* maps,
                     OnOpened on_opened)
    : locator_(std::move(locator)), on_opened_(std::move(on_opened)), maps_(maps) {
  static const symbols::MappingHistory kNoMappings;
  if (maps_ == nullptr) maps_ = &kNoMappings;
}

ModuleMap::Code ModuleMap::Find(uint32_t pid, uint64_t time, uint64_t pc) {
  Code c;
  const symbols::MappingHistory::Mapping* m = maps_->Find(pid, time, pc);
  if (m == nullptr) return c;
  const MappingInfo& info = InfoFor(*m);
  c.kind = info.kind;
  c.module = info.module;
  if (c.module != nullptr) {
    std::optional<uint64_t> vaddr = c.module->OffsetToVaddr(m->FileOffset(pc));
    c.vaddr_ok = vaddr.has_value();
    c.vaddr = vaddr.value_or(0);
  }
  return c;
}

const ModuleMap::MappingInfo& ModuleMap::InfoFor(const symbols::MappingHistory::Mapping& m) {
  auto [it, inserted] = info_.try_emplace(&m);
  if (!inserted) return it->second;
  // The symbolizer's notion of "a file we can read": anonymous memory,
  // memfd (.NET's W^X double mapping) and names like [vdso] are JIT-like
  // code with no file behind it.
  if (!symbols::Symbolizer::MayHaveElf(m.path)) {
    it->second.kind = kJit;
    return it->second;
  }
  it->second.kind = kElf;
  it->second.module = ModuleFor(m.path, maps_->BuildIdOf(m.path, m.build_id));
  return it->second;
}

const ElfModule* ModuleMap::ModuleFor(std::string_view path, std::string_view build_id) {
  auto [it, inserted] = modules_.try_emplace(std::make_pair(std::string(path), std::string(build_id)));
  if (!inserted) return it->second.get();
  const symbols::DsoLocation where = locator_.Locate(path, build_id);
  lookups_.push_back(symbols::DsoLookup::Of(path, build_id, where));
  it->second = ElfModule::Open(where);
  ++(it->second ? stats_.files_opened : stats_.files_missing);
  if (it->second != nullptr && !it->second->cfi_refused().empty()) {
    if (stats_.cfi_refused++ == 0) stats_.first_cfi_refused = it->second->cfi_refused();
  }
  if (it->second != nullptr && on_opened_ != nullptr) on_opened_(path, build_id);
  return it->second.get();
}

}  // namespace pageblame::unwind

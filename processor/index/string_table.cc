#include "processor/index/string_table.h"

namespace pageblame::index {

StringId StringTable::Intern(std::string_view s) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = ids_.find(s);
  if (it != ids_.end()) return it->second;
  StringId id(static_cast<uint32_t>(strings_.size()));
  strings_.emplace_back(s);
  ids_.emplace(std::string_view(strings_.back()), id);
  return id;
}

std::string_view StringTable::Get(StringId id) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!id.valid() || id.value() >= strings_.size()) return {};
  return strings_[id.value()];
}

size_t StringTable::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return strings_.size();
}

}  // namespace pageblame::index

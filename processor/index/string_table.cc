#include "processor/index/string_table.h"

namespace pageblame::index {

StringId StringTable::Intern(std::string_view s) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = ids_.find(s);
  if (it != ids_.end()) return it->second;
  StringId id(static_cast<uint32_t>(strings_.size()));
  strings_.emplace_back(s);
  // std::string keeps up to 15 characters in itself (libstdc++), longer on the heap.
  if (s.size() > 15) long_chars_ += s.size() + 1;
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

size_t StringTable::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  // A map slot: the view and the id, and a control byte.
  constexpr size_t kSlot = sizeof(std::string_view) + sizeof(StringId) + 1;
  return strings_.size() * sizeof(std::string) + long_chars_ + ids_.capacity() * kSlot;
}

}  // namespace pageblame::index

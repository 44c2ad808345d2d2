#include "processor/index/stack_table.h"

#include "absl/hash/hash.h"

namespace pageblame::index {

StackTable::StackTable() : set_(0, Hash{this}, Eq{this}) {}

size_t StackTable::Hash::operator()(StackId id) const { return (*this)(table->Get(id)); }

size_t StackTable::Hash::operator()(absl::Span<const uint64_t> ips) const {
  return absl::Hash<absl::Span<const uint64_t>>()(ips);
}

StackId StackTable::Intern(absl::Span<const uint64_t> ips, bool unwound) {
  auto it = set_.find(ips);
  if (it != set_.end()) return *it;
  StackId id(static_cast<uint32_t>(entries_.size()));
  entries_.push_back(Entry{ips_.size(), static_cast<uint32_t>(ips.size()), unwound});
  ips_.insert(ips_.end(), ips.begin(), ips.end());
  set_.insert(id);
  return id;
}

StackId StackTable::Reserve() {
  StackId id(static_cast<uint32_t>(entries_.size()));
  entries_.push_back(Entry{ips_.size(), 0, false});
  return id;
}

StackId StackTable::Bind(StackId id, absl::Span<const uint64_t> ips, bool unwound) {
  if (!id.valid() || id.value() >= entries_.size()) return id;
  auto it = set_.find(ips);
  if (it != set_.end()) {
    entries_[id.value()] = entries_[it->value()];  // the same ips, not stored twice
    return *it;
  }
  entries_[id.value()] = Entry{ips_.size(), static_cast<uint32_t>(ips.size()), unwound};
  ips_.insert(ips_.end(), ips.begin(), ips.end());
  set_.insert(id);
  return id;
}

}  // namespace pageblame::index

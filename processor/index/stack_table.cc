#include "processor/index/stack_table.h"

#include "absl/hash/hash.h"

namespace pageblame::index {

StackTable::StackTable() : set_(0, Hash{this}, Eq{this}) {}

size_t StackTable::Hash::operator()(StackId id) const { return (*this)(table->Get(id)); }

size_t StackTable::Hash::operator()(absl::Span<const uint64_t> ips) const {
  return absl::Hash<absl::Span<const uint64_t>>()(ips);
}

StackId StackTable::Intern(absl::Span<const uint64_t> ips) {
  auto it = set_.find(ips);
  if (it != set_.end()) return *it;
  StackId id(static_cast<uint32_t>(entries_.size()));
  entries_.push_back(Entry{ips_.size(), static_cast<uint32_t>(ips.size())});
  ips_.insert(ips_.end(), ips.begin(), ips.end());
  set_.insert(id);
  return id;
}

}  // namespace pageblame::index

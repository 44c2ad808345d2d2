// Interns user call stacks (leaf-first ip lists) so that each unique stack is
// stored once and named by a StackId, whatever the number of samples that
// carry it. Hashing is over the raw ips; nothing is symbolized here
// (symbols/ does that lazily, for printed stacks only).
//
//   StackTable t;
//   StackId a = t.Intern(ips);      // O(depth) expected
//   StackId b = t.Intern(ips);      // a == b, nothing stored twice
//   absl::Span<const uint64_t> same = t.Get(a);
//
// Memory: O(total ips of unique stacks). Not movable (the set's functors
// point back at the table).
#ifndef PAGEBLAME_INDEX_STACK_TABLE_H_
#define PAGEBLAME_INDEX_STACK_TABLE_H_

#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/types/span.h"
#include "processor/base/typed_id.h"

namespace pageblame::index {

class StackTable {
 public:
  StackTable();
  StackTable(const StackTable&) = delete;
  StackTable& operator=(const StackTable&) = delete;

  StackId Intern(absl::Span<const uint64_t> ips);
  // Empty for an invalid or unknown id. Inline: interning compares every
  // call's stack with the one it finds.
  absl::Span<const uint64_t> Get(StackId id) const {
    if (!id.valid() || id.value() >= entries_.size()) return {};
    const Entry& e = entries_[id.value()];
    return absl::Span<const uint64_t>(ips_.data() + e.offset, e.length);
  }
  size_t size() const { return entries_.size(); }
  size_t total_ips() const { return ips_.size(); }
  // Every ip of every stack, stacks one after another.
  absl::Span<const uint64_t> all_ips() const { return ips_; }
  // Bytes held (ips, entries, hash set), for -v.
  size_t bytes() const {
    return ips_.capacity() * sizeof(uint64_t) + entries_.capacity() * sizeof(Entry) +
           set_.capacity() * (sizeof(StackId) + 1);
  }

 private:
  struct Entry {
    uint64_t offset;
    uint32_t length;
  };
  struct Hash {
    using is_transparent = void;
    const StackTable* table;
    size_t operator()(StackId id) const;
    size_t operator()(absl::Span<const uint64_t> ips) const;
  };
  struct Eq {
    using is_transparent = void;
    const StackTable* table;
    bool operator()(StackId a, StackId b) const { return a == b; }
    bool operator()(StackId a, absl::Span<const uint64_t> b) const {
      absl::Span<const uint64_t> sa = table->Get(a);
      return sa.size() == b.size() &&
             (b.empty() || std::memcmp(sa.data(), b.data(), b.size() * sizeof(uint64_t)) == 0);
    }
    bool operator()(absl::Span<const uint64_t> a, StackId b) const { return (*this)(b, a); }
  };

  std::vector<uint64_t> ips_;
  std::vector<Entry> entries_;
  absl::flat_hash_set<StackId, Hash, Eq> set_;
};

}  // namespace pageblame::index

#endif  // PAGEBLAME_INDEX_STACK_TABLE_H_

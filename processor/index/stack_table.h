// Interns user call stacks (leaf-first ip lists) so that each unique stack is
// stored once and named by a StackId, whatever the number of samples that
// carry it. Hashing is over the raw ips; nothing is symbolized here
// (symbols/ does that lazily, for printed stacks only).
//
//   StackTable t;
//   StackId a = t.Intern(ips);      // O(depth) expected
//   StackId b = t.Intern(ips);      // a == b, nothing stored twice
//   absl::Span<const uint64_t> same = t.Get(a);
//   StackId late = t.Reserve();     // ips not known yet (Get: empty)
//   StackId c = t.Bind(late, ips);  // c == a: `late` is now an alias of a
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

class IndexCodecAccess;

class StackTable {
 public:
  StackTable();
  StackTable(const StackTable&) = delete;
  StackTable& operator=(const StackTable&) = delete;

  // `unwound`: the ips come from unwinding a stack copy (--call-graph
  // dwarf), not from the kernel's frame-pointer chain. perf shows inlined
  // frames for those only, and so do we (Unwound()). The same ips met
  // again keep the flag they were first interned with.
  StackId Intern(absl::Span<const uint64_t> ips, bool unwound = false);
  // An id for a stack whose ips are known only later (a --call-graph dwarf
  // sample whose unwinding waits for a mapping record further on in the
  // file). Get() gives nothing until Bind().
  StackId Reserve();
  // Gives a Reserve()d id its ips, and returns the id under which they are
  // interned: `id` itself, or the id an earlier Intern() gave the same ips
  // (then `id` is an alias: Get(id) gives the same ips, but callers that
  // group by id should use the returned one).
  StackId Bind(StackId id, absl::Span<const uint64_t> ips, bool unwound = true);
  // Empty for an invalid or unknown id. Inline: interning compares every
  // call's stack with the one it finds.
  absl::Span<const uint64_t> Get(StackId id) const {
    if (!id.valid() || id.value() >= entries_.size()) return {};
    const Entry& e = entries_[id.value()];
    return absl::Span<const uint64_t>(ips_.data() + e.offset, e.length);
  }
  // Whether the stack was unwound from a copy (Intern's `unwound`).
  bool Unwound(StackId id) const {
    return id.valid() && id.value() < entries_.size() && entries_[id.value()].unwound;
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
  friend class IndexCodecAccess;  // index_codec.h
  struct Entry {
    uint64_t offset;
    uint32_t length;
    bool unwound;  // in the padding: no bigger
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

// Strongly typed 32-bit ids, so a StackId cannot be passed where an EventId is
// expected. Ids index dense tables (StackTable, the index's event list, ...).
#ifndef PAGEBLAME_BASE_TYPED_ID_H_
#define PAGEBLAME_BASE_TYPED_ID_H_

#include <cstdint>
#include <limits>
#include <utility>

namespace pageblame {

template <typename Tag>
class TypedId {
 public:
  static constexpr uint32_t kInvalidValue = std::numeric_limits<uint32_t>::max();

  constexpr TypedId() = default;
  constexpr explicit TypedId(uint32_t value) : value_(value) {}

  constexpr uint32_t value() const { return value_; }
  constexpr bool valid() const { return value_ != kInvalidValue; }
  static constexpr TypedId Invalid() { return TypedId(); }

  friend constexpr bool operator==(TypedId a, TypedId b) { return a.value_ == b.value_; }
  friend constexpr bool operator!=(TypedId a, TypedId b) { return a.value_ != b.value_; }
  friend constexpr bool operator<(TypedId a, TypedId b) { return a.value_ < b.value_; }
  template <typename H>
  friend H AbslHashValue(H h, TypedId id) { return H::combine(std::move(h), id.value_); }

 private:
  uint32_t value_ = kInvalidValue;
};

// A unique user call stack (leaf first), interned in index::StackTable.
using StackId = TypedId<struct StackIdTag>;
// One memory syscall that changed an address space (index::Timeline events).
using EventId = TypedId<struct EventIdTag>;
// One version of one region: [start,end) with fixed attributes over [t_from,t_to).
using VersionId = TypedId<struct VersionIdTag>;

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_TYPED_ID_H_

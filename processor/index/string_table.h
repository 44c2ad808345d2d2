// Interns short strings (comms, DSO paths, build ids) to StringIds.
//
//   StringId id = strings.Intern("/usr/lib/x86_64-linux-gnu/libc.so.6");
//   std::string_view s = strings.Get(id);   // stable for the table's lifetime
//
// Thread-safe: while a trace loads, the reading thread interns names and the
// replay thread looks them up (both rare: once per COMM/MMAP record).
#ifndef PAGEBLAME_INDEX_STRING_TABLE_H_
#define PAGEBLAME_INDEX_STRING_TABLE_H_

#include <deque>
#include <mutex>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "processor/base/typed_id.h"

namespace pageblame {
using StringId = TypedId<struct StringIdTag>;
}

namespace pageblame::index {

class StringTable {
 public:
  StringId Intern(std::string_view s);
  // "" for an invalid id.
  std::string_view Get(StringId id) const;
  size_t size() const;
  // Bytes held (the strings, their deque slots, the hash map), for the
  // recorder's memory bound (TraceIndex::BoundedBytes). Estimated from the
  // characters interned and the map's capacity.
  size_t bytes() const;

 private:
  mutable std::mutex mu_;
  std::deque<std::string> strings_;  // deque: views into it stay valid
  absl::flat_hash_map<std::string_view, StringId> ids_;
  size_t long_chars_ = 0;  // characters of the strings too long for std::string's own buffer
};

}  // namespace pageblame::index

#endif  // PAGEBLAME_INDEX_STRING_TABLE_H_

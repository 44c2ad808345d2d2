// The calls whose samples the plugin keeps, as time spans per thread.
//
// Each index::CallEvent carries [first_time, last_time]: the first and last
// sample of that call on its thread (its enter and exit, and the
// raw_syscalls duplicates perf trace record writes). A thread makes one syscall at
// a time, so a sample of thread `tid` at time `t` belongs to the kept call
// whose span contains t, if any.
//
//   KeepSet k;
//   k.Add(idx.event(id), id);          // any order, duplicates fine
//   k.Finalize();                      // O(n log n)
//   EventId e = k.Find(tid, t);        // O(log calls of tid); invalid = drop
//   bool last;  k.Find(tid, t, &last); // last: t is the call's last sample
#ifndef PAGEBLAME_PLUGIN_KEEP_SET_H_
#define PAGEBLAME_PLUGIN_KEEP_SET_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "processor/base/typed_id.h"
#include "processor/index/timeline_types.h"

namespace pageblame::plugin {

class KeepSet {
 public:
  void Add(const index::CallEvent& ev, EventId id);
  void Finalize();
  EventId Find(uint32_t tid, uint64_t time, bool* is_last = nullptr) const;
  // Distinct calls kept (valid after Finalize).
  size_t size() const { return calls_; }
  // Those calls (after Finalize), by thread, each once.
  std::vector<EventId> Ids() const;

 private:
  struct Span {
    uint64_t first;
    uint64_t last;
    EventId id;
  };
  absl::flat_hash_map<uint32_t, std::vector<Span>> by_tid_;
  size_t calls_ = 0;
};

}  // namespace pageblame::plugin

#endif  // PAGEBLAME_PLUGIN_KEEP_SET_H_

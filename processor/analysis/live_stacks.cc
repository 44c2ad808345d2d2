#include "processor/analysis/live_stacks.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "processor/index/committed.h"

namespace pageblame::analysis {

std::vector<LiveStack> LiveStacks(const index::TraceIndex& idx, const std::vector<VersionId>& alive) {
  std::vector<LiveStack> rows;
  // Row of each (made by a call, its stack); (false, invalid): from before
  // the trace. A call recorded without a stack has a row of its own.
  absl::flat_hash_map<std::pair<bool, StackId>, size_t> slot;
  for (VersionId id : alive) {
    const index::Version& v = idx.version(id);
    const std::pair<bool, StackId> key{v.origin.valid(), v.origin.valid() ? idx.event(v.origin).stack : StackId()};
    auto [it, inserted] = slot.try_emplace(key, rows.size());
    if (inserted) rows.push_back(LiveStack{v.origin, 0, 0});
    LiveStack& row = rows[it->second];
    row.bytes += v.end - v.start;
    if (index::IsCommitted(v)) row.committed += v.end - v.start;
  }
  return rows;
}

}  // namespace pageblame::analysis

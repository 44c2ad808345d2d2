// A stack's growth between two moments (growth_report.h): its bytes at both
// ends, what was added, removed, and made and gone again in between.
//
//   StackGrowth s = g.stacks[0];
//   s.committed_growth();   // to.committed - from.committed
#ifndef PAGEBLAME_ANALYSIS_STACK_GROWTH_H_
#define PAGEBLAME_ANALYSIS_STACK_GROWTH_H_

#include <cstdint>
#include <optional>

#include "processor/analysis/heap_split.h"
#include "processor/analysis/kind_tally.h"
#include "processor/analysis/region_kind.h"
#include "processor/base/typed_id.h"

namespace pageblame::analysis {

// Bytes at one moment.
struct BytesAt {
  uint64_t mapped = 0;
  uint64_t committed = 0;  // prot other than PROT_NONE
  uint32_t regions = 0;    // versions (maps --json objects)
  // Resident bytes of the versions a snapshot read; with snapshots
  // (Growth::snapshots) 0 where nothing is mapped (a stack that had nothing
  // at `from` grew by all it has at `to`). Unknown (nullopt) without
  // snapshots, where bytes are mapped but no snapshot read any (all
  // PROT_NONE or mapped after it), and whenever some of these bytes are of
  // a process with no snapshot at this moment (rss_incomplete): the sum is
  // not the others' alone.
  std::optional<uint64_t> rss;
  bool rss_incomplete = false;
  // Malloc arena bytes in use and free (heap_split.h), from the latest heap
  // snapshot at or before this moment; unknown as rss is (no snapshot of a
  // process with bytes here: heap_incomplete).
  std::optional<HeapUse> heap;
  bool heap_incomplete = false;
};

// Adds `b` to `sum`: bytes and regions add; resident bytes add while both
// are known, and a sum with bytes of a process without a snapshot stays
// unknown (rss_incomplete).
void AddBytesAt(BytesAt* sum, const BytesAt& b);

struct StackGrowth {
  StackId stack;
  EventId first_call;  // its earliest credited call: the stack's representative
  BytesAt from = {}, to = {};
  uint64_t added = 0;
  uint64_t removed = 0;
  uint64_t made_gone = 0;
  uint32_t calls = 0;           // distinct credited calls (per process) with bytes at either end
  KindTally from_kinds, to_kinds;  // bytes by kind at each end
  // What its memory is: as at `to`, else as at `from`.
  std::optional<RegionKind> kind() const {
    std::optional<RegionKind> k = to_kinds.Dominant();
    return k ? k : from_kinds.Dominant();
  }
  // Address spaces are below 2^57 bytes: the differences fit.
  int64_t growth() const { return static_cast<int64_t>(to.mapped) - static_cast<int64_t>(from.mapped); }
  int64_t committed_growth() const {
    return static_cast<int64_t>(to.committed) - static_cast<int64_t>(from.committed);
  }
  // In-use growth of its malloc arena bytes: known only when both ends are.
  std::optional<int64_t> in_use_growth() const {
    if (!from.heap || !to.heap) return std::nullopt;
    return static_cast<int64_t>(to.heap->in_use) - static_cast<int64_t>(from.heap->in_use);
  }
  // Known only when both ends are.
  std::optional<int64_t> rss_growth() const {
    if (!from.rss || !to.rss) return std::nullopt;
    return static_cast<int64_t>(*to.rss) - static_cast<int64_t>(*from.rss);
  }
};

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_STACK_GROWTH_H_

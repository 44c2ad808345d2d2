#include "processor/analysis/growth_summary.h"

namespace pageblame::analysis {
namespace {

// `total` minus `before`: before's bytes are part of total's
// (ComputeGrowth checks the sums), so nothing wraps.
BytesAt StacksPart(const BytesAt& total, const BytesAt& before) {
  BytesAt b;
  b.mapped = total.mapped - before.mapped;
  b.committed = total.committed - before.committed;
  b.regions = total.regions - before.regions;
  b.rss_incomplete = total.rss_incomplete;
  if (total.rss) b.rss = *total.rss - before.rss.value_or(0);
  b.heap_incomplete = total.heap_incomplete;
  if (total.heap) {
    const HeapUse none;
    b.heap = HeapUse{total.heap->in_use - before.heap.value_or(none).in_use,
                     total.heap->free - before.heap.value_or(none).free};
  }
  return b;
}

}  // namespace

GrowthSummary SummarizeGrowth(const Growth& g) {
  GrowthSummary s;
  for (const StackGrowth& st : g.stacks) {
    if (st.from.committed == 0 && st.to.committed == 0) continue;
    ++s.committed_stacks;
    s.committed_calls += st.calls;
  }
  s.stacks_from = StacksPart(g.total_from, g.before_from);
  s.stacks_to = StacksPart(g.total_to, g.before_to);
  return s;
}

}  // namespace pageblame::analysis

#include "processor/analysis/attribution_summary.h"

#include <algorithm>

#include "processor/analysis/resident_view.h"

namespace pageblame::analysis {

AttributionSummary SummarizeAttribution(const Attribution& a) {
  AttributionSummary s;
  for (const StackTotal& st : a.stacks) {
    s.calls += st.calls;
    s.committed_stacks += st.committed != 0;
    AddRss(&s.stacks_rss, st.rss);
  }
  for (const RegionAttribution& ra : a.regions) {
    s.committed_regions +=
        std::any_of(ra.calls.begin(), ra.calls.end(), [](const CallBytes& c) { return c.committed > 0; });
    s.before_trace_regions += ra.before_trace_bytes != 0;
    s.unmapped_regions += ra.unmapped_bytes != 0;
  }
  return s;
}

}  // namespace pageblame::analysis

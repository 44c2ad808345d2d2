// The pprof profiles of `attribute`, `growth` and `maps --format pprof`:
// gzipped profile.proto files (PprofBuilder) whose samples are the same
// stacks and bytes as those commands' JSON.
//
//   attribute  mapped/bytes, committed/bytes, regions/count per stack (as
//              its JSON "stacks"), plus "[before trace]" and "[not mapped]"
//              samples, so the mapped values add up to the table's bytes;
//   growth     mapped_growth, committed_growth, regions_growth (the default
//              sample type is mapped_growth; values can be negative), and
//              mapped_from, mapped_to, committed_from, committed_to (and
//              resident_growth, resident_from, resident_to with snapshots),
//              per stack and for "[before trace]";
//   maps       mapped, committed, regions (and resident_space when the trace
//              has residency snapshots) per creating stack, with labels
//              pid and prot; regions from before the trace as the stack
//              "[before trace]" <- its path (or [anon], [heap]).
// With heap snapshots (TRACE.heap), attribute and maps add in_use_space and
// free_space, growth in_use_growth, in_use_from and in_use_to: the bytes of
// malloc's arena pages in live chunks and free held by glibc (0 for other
// kinds and where no snapshot speaks: pprof has no "unknown").
//
// With the stacks' methods (analysis/attribution_methods.h,
// growth_methods.h), each sample of a stack has the string label "method":
// the application method the first screen's row names (`go tool pprof
// -tags` totals them, `-tagfocus=method=Program::Leak` keeps one method's
// samples, `-tagshow=method`); pseudo samples have none.
//
//   std::string gz = GrowthPprof(trace, growth, methods);   // write to -o FILE
#ifndef PAGEBLAME_RENDER_PPROF_PROFILES_H_
#define PAGEBLAME_RENDER_PPROF_PROFILES_H_

#include <cstdio>
#include <string>
#include <vector>

#include "processor/analysis/attribute_report.h"
#include "processor/analysis/attribution_methods.h"
#include "processor/analysis/growth_methods.h"
#include "processor/analysis/growth_report.h"
#include "processor/analysis/maps_answer.h"
#include "processor/session/session.h"

namespace pageblame::render {

std::string AttributePprof(const session::Session& trace, const analysis::Attribution& a,
                           const std::vector<analysis::MethodTotal>& methods = {});
std::string GrowthPprof(const session::Session& trace, const analysis::Growth& g,
                        const std::vector<analysis::MethodGrowth>& methods = {});
// The same profile written to `out` a sample at a time (its bytes are
// GrowthPprof's): a million-stack growth's samples are never held. False
// when a write failed.
bool WriteGrowthPprof(const session::Session& trace, const analysis::Growth& g,
                      const std::vector<analysis::MethodGrowth>& methods, std::FILE* out);
std::string MapsPprof(const session::Session& trace, const analysis::MapsAnswer& answer);

}  // namespace pageblame::render

#endif  // PAGEBLAME_RENDER_PPROF_PROFILES_H_

// What a region version maps, in one word: its path, "[heap]" (the path
// the index gives the brk heap), "[anon]", or "[file fd=3]" for a file
// mapping whose path the trace never saw (an mmap of an fd recorded
// without -d: the fd is the mmap call's fifth argument).
//
//   RegionLabel(idx, v);   // "/usr/lib/x86_64-linux-gnu/libc.so.6"
#ifndef PAGEBLAME_ANALYSIS_REGION_LABEL_H_
#define PAGEBLAME_ANALYSIS_REGION_LABEL_H_

#include <string>

#include "processor/index/trace_index.h"

namespace pageblame::analysis {

std::string RegionLabel(const index::TraceIndex& idx, const index::Version& v);

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_REGION_LABEL_H_
